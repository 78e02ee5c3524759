// One forward step of lm.onnx: token ids, mask and positions in, logits and the next cache out.
import { LoraFeedCache, type EngineAdapter } from './adapter';
import { padRows, unpadStates, type StateEncoder } from './encoder';
import { EngineError, invalid } from './errors';
import { keepsLogits, lmInputsKind } from './graph-io';
import { KvCache } from './kv-cache';
import type { BundleManifest } from './manifest';
import { batchRow, concatBatch, floats, int64, type Session, type Tensor } from './ort';

export interface StepInput {
  readonly batch: number;
  /** Row-major [batch, seq] token ids and positions, [batch, past + seq] 1/0 attention mask. */
  readonly inputIds: readonly number[];
  readonly positionIds: readonly number[];
  readonly attentionMask: readonly number[];
  readonly cache: KvCache;
  readonly lora: Readonly<Record<string, Tensor>>;
  /** Logits of each row's last n positions only (generation reads 1); 0 or absent = all. A format 1
   * graph has no such input and always returns all: read `logitsPerRow`. */
  readonly logitsToKeep?: number;
}

export interface StepOutput {
  /** [batch, logitsPerRow, vocab] row-major: the last `logitsPerRow` positions of each row. */
  readonly logits: Float32Array;
  readonly logitsPerRow: number;
  readonly cache: KvCache;
  /** [batch, seq, hidden] of the encoder layer, when asked for. */
  readonly hidden?: Float32Array;
}

const layered = new WeakMap<object, WeakMap<object, Readonly<Record<string, Tensor>>>>();

/** The past and lora.* feeds as one object, made once per pair: a decode step's own four feeds are set on
 * an object whose prototype this is (onnxruntime-node and the feed check read inherited properties), since
 * spreading ~360 feeds of a 30-layer model with LoRA groups into a new object took 0.2–0.5 ms a step. A
 * fused cache's past feeds stay the same object while its buffers do (kv-cache.ts), the lora.* ones for a
 * request (LoraFeedCache). */
function constantFeeds(
  past: Readonly<Record<string, Tensor>>,
  lora: Readonly<Record<string, Tensor>>,
): Readonly<Record<string, Tensor>> {
  let byLora = layered.get(past);
  if (!byLora) layered.set(past, (byLora = new WeakMap()));
  let both = byLora.get(lora);
  if (!both) byLora.set(lora, (both = Object.freeze({ ...past, ...lora })));
  return both;
}

export class LanguageModel implements StateEncoder {
  readonly takesLora: boolean;
  /** Format 2: the graph computes logits only for the positions asked for (`logits_to_keep`). */
  readonly keepsLogits: boolean;
  /** lm.onnx's attention is onnxruntime's GroupQueryAttention (bundle.json io.lm.attention "fused"). */
  readonly fusedAttention: boolean;
  private readonly fetch: string[];
  private readonly lora: LoraFeedCache;

  constructor(
    readonly session: Session,
    readonly manifest: BundleManifest,
  ) {
    this.takesLora = lmInputsKind(manifest.io.lm.inputs) === 'lora';
    this.keepsLogits = keepsLogits(manifest.io.lm.inputs);
    this.fusedAttention = manifest.io.lm.attention === 'fused';
    this.fetch = ['logits', ...KvCache.outputNames(manifest)];
    this.lora = new LoraFeedCache(manifest, session.provider === 'webgpu' ? 1 : 0);
  }

  get vocab(): number {
    return this.manifest.architecture.vocab;
  }

  /** Checks each row's adapter against the bundle and packs the lora.* feeds (constant for a request;
   * cached by adapter identity, so a switch back to a known adapter costs a lookup). */
  loraFeeds(rows: readonly (EngineAdapter | null)[]): Readonly<Record<string, Tensor>> {
    if (this.takesLora) return this.lora.feeds(rows);
    this.lora.check(rows);
    if (rows.some((ad) => ad && ad.rank > 0))
      throw invalid(
        `bundle ${this.manifest.id}: ${this.manifest.io.lm.file} has no LoRA inputs, so it cannot apply an adapter`,
      );
    return {};
  }

  /** The encoder: `hidden_states` [1, m, hidden] of `ids` alone (batch 1, mask all 1, positions
   * 0 … m−1, past 0, LoRA rank 0). Fetches only that output, so no logits are copied back. */
  async encode(ids: readonly number[]): Promise<Float32Array> {
    return (await this.encodeBatch([ids]))[0]!;
  }

  get file(): string {
    return this.manifest.io.lm.file;
  }

  /** Several sequences' encoder states in one run (padded as encoder.ts `padRows`). Returns [m_i, hidden] per row. */
  async encodeBatch(rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const { batch: b, width, feeds } = padRows(this.manifest, rows);
    const all = {
      ...feeds,
      ...(this.keepsLogits ? { logits_to_keep: int64([1], [1]) } : {}),
      ...KvCache.empty(this.manifest, b).feeds(),
      ...this.loraFeeds(rows.map(() => null)),
    };
    const out = floats((await this.session.run(all, ['hidden_states'])).hidden_states!);
    return unpadStates(out, rows, width, this.manifest.architecture.hidden);
  }

  async forward(step: StepInput, { hidden = false } = {}): Promise<StepOutput> {
    const { batch: b } = step;
    const s = step.inputIds.length / b;
    const t = step.attentionMask.length / b;
    if (t !== step.cache.length + s) {
      throw new EngineError(
        'internal',
        `attention mask has ${t} slots per row; past ${step.cache.length} + sequence ${s} = ${step.cache.length + s}`,
      );
    }
    const keep = this.keepsLogits ? (step.logitsToKeep ?? 0) : 0;
    const cache = step.cache.reserve(s);
    const feeds = Object.assign(Object.create(constantFeeds(cache.feeds(), step.lora)) as Record<string, Tensor>, {
      input_ids: int64(step.inputIds, [b, s]),
      attention_mask: int64(step.attentionMask, [b, t]),
      position_ids: int64(step.positionIds, [b, s]),
      ...(this.keepsLogits ? { logits_to_keep: int64([keep], [1]) } : {}),
    });
    const fetch = hidden ? [...this.fetch, 'hidden_states'] : this.fetch;
    // GroupQueryAttention takes several new tokens after a past for one row at a time (the step after a
    // shared prefix): such a batch runs row by row, its outputs stacked (docs/bundle-format.md "Attention").
    const byRow = this.fusedAttention && b > 1 && s > 1 && step.cache.length > 0;
    const out = byRow ? await this.runRows(feeds, b, fetch) : await this.session.run(feeds, fetch);
    return {
      logits: floats(out.logits!),
      logitsPerRow: keep > 0 ? Math.min(keep, s) : s,
      cache: cache.after(out, s),
      ...(hidden ? { hidden: floats(out.hidden_states!) } : {}),
    };
  }

  private async runRows(
    feeds: Readonly<Record<string, Tensor>>,
    b: number,
    fetch: readonly string[],
  ): Promise<Record<string, Tensor>> {
    const outs: Record<string, Tensor>[] = [];
    for (let r = 0; r < b; r++) {
      const row: Record<string, Tensor> = {};
      for (const k in feeds) row[k] = k === 'logits_to_keep' ? feeds[k]! : batchRow(feeds[k]!, r); // inherited too
      outs.push(await this.session.run(row, fetch));
    }
    return Object.fromEntries(fetch.map((k) => [k, concatBatch(outs.map((o) => o[k]!))]));
  }
}
