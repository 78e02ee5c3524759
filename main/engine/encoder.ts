// The encoder states compile reads: encoder.onnx when the bundle has one (tokens → layer-k states, no
// later layers, no LM head, no KV cache), else lm.onnx's hidden_states output (lm.ts). Both pad the
// same way, so they give the same states (tests/int/engine/encoder.int.test.ts).
import { invalid } from './errors';
import type { BundleManifest } from './manifest';
import { floats, int64, type Session, type Tensor } from './ort';

export interface StateEncoder {
  /** The graph file the states come from (bench and logs say which path compile took). */
  readonly file: string;
  /** [m_i, hidden] states per row; each row alone at positions 0 … m_i − 1. */
  encodeBatch(rows: readonly (readonly number[])[]): Promise<Float32Array[]>;
}

export interface PaddedRows {
  readonly batch: number;
  readonly width: number;
  readonly feeds: Record<'input_ids' | 'attention_mask' | 'position_ids', Tensor>;
}

/**
 * Rows right-padded to the longest, pad slots masked, each row's positions from 0. Causal attention
 * never lets a real token see the padding after it, so every row's states are those of running it alone.
 */
export function padRows(manifest: BundleManifest, rows: readonly (readonly number[])[]): PaddedRows {
  const { max_positions } = manifest.architecture;
  const b = rows.length;
  const width = Math.max(0, ...rows.map((r) => r.length));
  if (b === 0 || rows.some((r) => r.length === 0)) throw invalid('encode: no tokens');
  if (width > max_positions) throw invalid(`encode: ${width} tokens > max_positions ${max_positions}`);
  const ids: number[] = [];
  const mask: number[] = [];
  const positions: number[] = [];
  for (const r of rows) {
    const pad = width - r.length;
    ids.push(...r, ...Array<number>(pad).fill(manifest.special_tokens.pad));
    mask.push(...Array<number>(r.length).fill(1), ...Array<number>(pad).fill(0));
    positions.push(...r.map((_, i) => i), ...Array<number>(pad).fill(0));
  }
  return {
    batch: b,
    width,
    feeds: {
      input_ids: int64(ids, [b, width]),
      attention_mask: int64(mask, [b, width]),
      position_ids: int64(positions, [b, width]),
    },
  };
}

/** [b, width, hidden] → each row's first m_i states. */
export function unpadStates(
  out: Float32Array,
  rows: readonly (readonly number[])[],
  width: number,
  hidden: number,
): Float32Array[] {
  return rows.map((r, i) => out.slice(i * width * hidden, (i * width + r.length) * hidden));
}

/** encoder.onnx (docs/bundle-format.md "encoder.onnx"). */
export class EncoderGraph implements StateEncoder {
  constructor(
    readonly session: Session,
    readonly manifest: BundleManifest,
  ) {}

  get file(): string {
    return this.manifest.io.encoder?.file ?? 'encoder.onnx';
  }

  async encodeBatch(rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const { feeds, width } = padRows(this.manifest, rows);
    const out = floats((await this.session.run(feeds, ['hidden_states'])).hidden_states!);
    return unpadStates(out, rows, width, this.manifest.architecture.hidden);
  }
}
