// Compiling a skill: SKILL.md text → tokens → encoder chunks (encoder.onnx, else lm.onnx's hidden_states) → hypernet.onnx
// per chunk → the chunk adapters combined by mean rank concatenation. Exactly the algorithm of
// docs/bundle-format.md "hypernet.onnx and compiling a skill"; Python's pskills_train.hyper.compile
// gives the same adapter (tests/int/engine/compile.int.test.ts checks it against the fixture oracle).
import type { Adapter, LoraPair, TargetKey } from '../adapters/types';
import { checkAdapterFits, foldAdapter, type EngineAdapter } from './adapter';
import type { Bundle, BundleInfo } from './bundle';
import { EngineError, invalid } from './errors';
import type { ChunkFactors } from './hypernet';
import type { BundleManifest } from './manifest';

/** [start, end) token spans of the encoder chunks of n ids: stride = budget − overlap, chunk c covers
 * ids[c·stride : c·stride + budget] for c = 0, 1, … while c = 0 or c·stride + overlap < n. */
export function chunkSpans(n: number, budget: number, overlap: number): [number, number][] {
  if (!Number.isInteger(n) || n <= 0) throw invalid(`cannot compile an empty skill (${n} tokens)`);
  if (!Number.isInteger(budget) || budget < 1) throw invalid(`encoder.token_budget ${budget} must be an integer ≥ 1`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= budget)
    throw invalid(`encoder.chunk_overlap ${overlap} must be in 0 … token_budget − 1 (${budget - 1})`);
  const stride = budget - overlap;
  const spans: [number, number][] = [];
  for (let c = 0; c === 0 || c * stride + overlap < n; c++) spans.push([c * stride, Math.min(c * stride + budget, n)]);
  return spans;
}

/**
 * k chunk adapters → the skill's adapter: A = [A_1/k | … | A_k/k], B = [B_1; …; B_k] per (layer,
 * module), rank k·r, α = rank (scale 1: the factors are folded). ΔW = mean of the chunks' ΔW.
 * Chunk output index j of A.{module} [L, d_in, r] is layer lora.layers[j].
 */
export function combineChunks(manifest: BundleManifest, chunks: readonly ChunkFactors[], r: number): Adapter {
  const k = chunks.length;
  if (k === 0) throw invalid('combineChunks: no chunks');
  const R = k * r;
  const targets = new Map<TargetKey, LoraPair>();
  manifest.lora.layers.forEach((layer, j) => {
    for (const { module, d_in: dIn, d_out: dOut } of manifest.lora.targets) {
      const A = new Float32Array(dIn * R);
      const B = new Float32Array(R * dOut);
      chunks.forEach((chunk, c) => {
        const f = chunk.get(module);
        if (!f) throw new EngineError('internal', `chunk ${c}: hypernet gave no factors for module ${module}`);
        const a = f.A.subarray(j * dIn * r, (j + 1) * dIn * r); // [d_in, r]
        for (let i = 0; i < dIn; i++) for (let s = 0; s < r; s++) A[i * R + c * r + s] = a[i * r + s]! / k;
        B.set(f.B.subarray(j * r * dOut, (j + 1) * r * dOut), c * r * dOut); // rows c·r … c·r + r − 1
      });
      targets.set(`${layer}.${module}`, { dIn, dOut, A, B });
    }
  });
  return { rank: R, alpha: R, targets };
}

/** Tokens per encoder run when chunks are batched (bounds the activations of one run). */
export const ENCODER_BATCH_TOKENS = 2048;

export interface CompileProgress {
  /** Chunks done so far (0 before the first), of `chunks`. */
  readonly chunk: number;
  readonly chunks: number;
  readonly tokens: number;
}

export interface CompileOptions {
  readonly onProgress?: (p: CompileProgress) => void;
  /** Checked before every chunk and at the end; an aborted compile throws `cancelled`. */
  readonly signal?: AbortSignal;
}

export interface CompiledSkill {
  /** The algebra's form (α = rank, scale 1), for the store and the merges. */
  readonly adapter: Adapter;
  /** The engine's form (the same arrays: scale 1 needs no folding). */
  readonly engine: EngineAdapter;
  readonly rank: number;
  readonly chunks: [number, number][];
  readonly tokens: number;
  readonly ms: number;
  /** Of `ms`: the encoder runs and the hypernet.onnx runs. */
  readonly encoderMs: number;
  readonly hypernetMs: number;
  /** The graph the encoder states came from (encoder.onnx, or lm.onnx in a bundle without one). */
  readonly encoderFile: string;
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new EngineError('cancelled', 'compile cancelled');
}

/**
 * One turn of the event loop: ORT's runs can resolve without one, and then a cancel (or any request)
 * arriving over IPC or the web host waits for the whole compile.
 */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether this bundle can compile skills; the error names the bundle and its folder. */
export function requireHypernet(bundle: Pick<BundleInfo, 'manifest' | 'dir'>): void {
  if (!bundle.manifest.hypernet) {
    throw invalid(
      `bundle ${bundle.manifest.id} (${bundle.dir}) has no hypernetwork (bundle.json "hypernet" is null), so it cannot compile skills; load a bundle with hypernet.onnx`,
      {
        bundle: bundle.manifest.id,
        dir: bundle.dir,
        field: 'hypernet',
      },
    );
  }
}

/** The ids the encoder reads: the SKILL.md text as stored, with line endings read as \n like the
 *  training corpus, encoded without special tokens (docs/bundle-format.md, compiling step 1). */
export function skillIds(bundle: Pick<BundleInfo, 'tokenizer'>, text: string): number[] {
  return bundle.tokenizer.encode(text.replace(/\r\n?/g, '\n'));
}

/** SKILL.md text → the skill's adapter, in this thread: checked for a hypernetwork, folded, checked to fit. */
export async function compileSkill(bundle: Bundle, text: string, options: CompileOptions = {}): Promise<CompiledSkill> {
  requireHypernet(bundle);
  const compiled = await compileFactors(bundle, text, options);
  const engine = foldAdapter(compiled.adapter);
  checkAdapterFits(bundle.manifest, engine);
  return { ...compiled, engine };
}

/** The algebra's form only, the engine worker's half: the caller checked the bundle (requireHypernet), and the
 *  thread that uses the engine's form makes and checks it (engine-client.ts), once. */
export async function compileFactors(
  bundle: Bundle,
  text: string,
  options: CompileOptions = {},
): Promise<Omit<CompiledSkill, 'engine'>> {
  const { signal, onProgress } = options;
  const t0 = performance.now();
  const hyper = bundle.hypernet!; // a bundle.json with a hypernet has its session (session-table.ts)
  if (text.length === 0) throw invalid('cannot compile an empty skill text');
  const ids = skillIds(bundle, text);
  const { token_budget: budget, chunk_overlap: overlap } = bundle.manifest.encoder;
  const spans = chunkSpans(ids.length, budget, overlap);
  const factors: ChunkFactors[] = [];
  let encoderMs = 0;
  let hypernetMs = 0;
  onProgress?.({ chunk: 0, chunks: spans.length, tokens: ids.length });
  // Encoder runs take up to ENCODER_BATCH_TOKENS tokens of chunks at once (the same states as one
  // chunk at a time, see encoder.ts padRows); the hypernetwork takes one chunk per run.
  const group = Math.max(1, Math.floor(ENCODER_BATCH_TOKENS / budget));
  for (let g = 0; g < spans.length; g += group) {
    checkAborted(signal);
    const part = spans.slice(g, g + group);
    const t1 = performance.now();
    const states = await bundle.encoder.encodeBatch(part.map(([start, end]) => ids.slice(start, end)));
    encoderMs += performance.now() - t1;
    for (const [i, [start, end]] of part.entries()) {
      await yieldToLoop();
      checkAborted(signal);
      const t2 = performance.now();
      factors.push(await hyper.run(states[i]!, end - start));
      hypernetMs += performance.now() - t2;
      onProgress?.({ chunk: factors.length, chunks: spans.length, tokens: ids.length });
    }
  }
  checkAborted(signal);
  const adapter = combineChunks(bundle.manifest, factors, hyper.rank);
  return {
    adapter,
    rank: adapter.rank,
    chunks: spans,
    tokens: ids.length,
    ms: performance.now() - t0,
    encoderMs,
    hypernetMs,
    encoderFile: bundle.encoder.file,
  };
}
