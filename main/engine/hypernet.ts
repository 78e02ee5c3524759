// hypernet.onnx: one encoder chunk's states → that chunk's adapter factors, per LoRA target module
// stacked over lora.layers (docs/bundle-format.md "hypernet.onnx and compiling a skill").
import { EngineError } from './errors';
import type { BundleManifest } from './manifest';
import { float32, floats, type Session } from './ort';

/** One chunk's output: per module, A [L, d_in, r] and B [L, r, d_out] row-major (scale folded). */
export type ChunkFactors = ReadonlyMap<string, { readonly A: Float32Array; readonly B: Float32Array }>;

export class Hypernetwork {
  constructor(
    readonly session: Session,
    readonly manifest: BundleManifest,
  ) {
    if (!manifest.hypernet) throw new EngineError('internal', 'Hypernetwork without a hypernet entry in bundle.json');
  }

  get rank(): number {
    return this.manifest.hypernet!.rank;
  }

  /** states [1, n, d_enc] row-major, every state real (mask all 1). */
  async run(states: Float32Array, n: number): Promise<ChunkFactors> {
    const d = this.manifest.hypernet!.d_enc;
    if (n < 1 || states.length !== n * d)
      throw new EngineError('internal', `hypernet states: ${states.length} values for n = ${n}, d_enc = ${d}`);
    const out = await this.session.run({
      states: float32(states, [1, n, d]),
      mask: float32(new Float32Array(n).fill(1), [1, n]),
    });
    const L = this.manifest.lora.layers.length;
    const r = this.rank;
    const factors = new Map<string, { A: Float32Array; B: Float32Array }>();
    for (const { module, d_in, d_out } of this.manifest.lora.targets) {
      const A = floats(out[`A.${module}`]!);
      const B = floats(out[`B.${module}`]!);
      if (A.length !== L * d_in * r || B.length !== L * r * d_out) {
        throw new EngineError(
          'internal',
          `${this.session.file}: A.${module}/B.${module} have ${A.length}/${B.length} values, expected ${L * d_in * r}/${L * r * d_out}`,
        );
      }
      factors.set(module, { A, B });
    }
    return factors;
  }
}
