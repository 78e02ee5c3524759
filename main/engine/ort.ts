// The one module that imports onnxruntime-node (CONVENTIONS 7). Everything else sees `Session`,
// `Tensor` and the tensor factories below; every run's feeds are checked against the graph first.
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { EngineError } from './errors';
import { checkFeeds, describeFeeds, FeedError, type TensorSpec } from './feed-check';
import { defaultLogger, type Logger } from './logger';

export type Tensor = ort.Tensor;
export const PROVIDERS = ['cpu', 'webgpu', 'cuda'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface SessionOptions {
  /** Execution provider; falls back to cpu when it is unavailable (Session.fallback says why; loadBundle logs it). */
  provider?: Provider;
  /** Threads inside one operator. Default 1 on machines with ≤ 2 cores (threads contend there), else ORT's. */
  intraOpNumThreads?: number;
  /** false: the op threads sleep between runs instead of spinning (several sessions taking turns). */
  allowSpinning?: boolean;
  logger?: Logger;
}

export { defaultLogger, type Logger } from './logger';

export function float32(data: Float32Array, dims: readonly number[]): Tensor {
  return new ort.Tensor('float32', data, dims);
}

/** float16 values as their raw bits (what a float16 initializer's bytes are). */
export function float16(bits: Uint16Array, dims: readonly number[]): Tensor {
  return new ort.Tensor('float16', bits, dims);
}

export function int64(values: ArrayLike<number> | BigInt64Array, dims: readonly number[]): Tensor {
  const data = values instanceof BigInt64Array ? values : BigInt64Array.from(values, (v) => BigInt(v));
  return new ort.Tensor('int64', data, dims);
}

/** Row `r` of a tensor batched along its first axis, as a [1, …] view of the same memory (no copy). */
export function batchRow(t: Tensor, r: number): Tensor {
  const data = t.data as Float32Array | BigInt64Array;
  const size = data.length / t.dims[0]!;
  return new ort.Tensor(t.type as 'float32', data.subarray(r * size, (r + 1) * size) as Float32Array, [
    1,
    ...t.dims.slice(1),
  ]);
}

/** Tensors of equal shape past the first axis, stacked along it (one copy). */
export function concatBatch(parts: readonly Tensor[]): Tensor {
  const first = parts[0]!;
  const datas = parts.map((t) => t.data as Float32Array | BigInt64Array);
  const out =
    first.data instanceof BigInt64Array
      ? new BigInt64Array(datas.reduce((n, d) => n + d.length, 0))
      : new Float32Array(datas.reduce((n, d) => n + d.length, 0));
  let at = 0;
  for (const d of datas) {
    (out as Float32Array).set(d as Float32Array, at);
    at += d.length;
  }
  const rows = parts.reduce((n, t) => n + t.dims[0]!, 0);
  return new ort.Tensor(first.type as 'float32', out as Float32Array, [rows, ...first.dims.slice(1)]);
}

/** The float data of an output tensor (CPU outputs come back as Float32Array). */
export function floats(t: Tensor): Float32Array {
  if (!(t.data instanceof Float32Array)) throw new EngineError('internal', `expected float32 output, got ${t.type}`);
  return t.data;
}

export function defaultThreads(): number | undefined {
  return availableParallelism() <= 2 ? 1 : undefined;
}

/** What a user can do when a provider does not start (docs/providers.md has the details). */
const HINTS: Record<Provider, string> = {
  cpu: '',
  cuda: 'CUDA needs an NVIDIA GPU, CUDA 12 and cuDNN 9 libraries, and the provider libraries of this onnxruntime-node: `ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node` (docs/providers.md)',
  webgpu:
    'WebGPU needs a GPU adapter (on Linux a Vulkan driver), or a software one (docs/providers.md: SwiftShader from Debian chromium)',
};

/** The message a fallback to cpu logs and shows: what was asked, why it failed, what to do. */
export function fallbackMessage(provider: Provider, why: string): string {
  return `execution provider '${provider}' is unavailable (${why}); using cpu. ${HINTS[provider]}`.trim();
}

function specs(meta: readonly ort.InferenceSession.ValueMetadata[]): TensorSpec[] {
  return meta.map((m) =>
    m.isTensor ? { name: m.name, type: m.type, dims: [...m.shape] } : { name: m.name, type: 'non-tensor', dims: [] },
  );
}

async function create(
  path: string,
  provider: Provider,
  threads: number | undefined,
  spin = true,
): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(path, {
    executionProviders: [provider],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    ...(threads === undefined ? {} : { intraOpNumThreads: threads, interOpNumThreads: 1 }),
    ...(spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
  });
}

export class Session {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly file: string,
    readonly provider: Provider,
    readonly inputs: readonly TensorSpec[],
    readonly outputs: readonly TensorSpec[],
    private readonly log: Logger,
    /** Why the requested provider was not used (null: it was). */
    readonly fallback: string | null = null,
  ) {}

  static async open(file: string, options: SessionOptions = {}): Promise<Session> {
    const log = options.logger ?? defaultLogger;
    const threads = options.intraOpNumThreads ?? defaultThreads();
    const requested = options.provider ?? 'cpu';
    let provider: Provider = requested;
    let fallback: string | null = null;
    const available = ort.listSupportedBackends().map((b) => b.name);
    if (!available.includes(provider)) {
      fallback = fallbackMessage(provider, `not in this onnxruntime-node build, which has ${available.join(', ')}`);
      provider = 'cpu';
    }
    let session: ort.InferenceSession | null = null;
    if (provider !== 'cpu') {
      try {
        session = await create(file, provider, threads, options.allowSpinning);
      } catch (err) {
        // ORT's first line carries a source path and a failed check before the reason: keep the reason.
        const line = (err as Error).message.split('\n')[0]!;
        const at = line.lastIndexOf(' was false. ');
        const why = (at >= 0 ? line.slice(at + 12) : line).slice(0, 300);
        fallback = fallbackMessage(provider, `it failed to start: ${why}`);
        provider = 'cpu';
      }
    }
    try {
      session ??= await create(file, 'cpu', threads, options.allowSpinning);
    } catch (err) {
      throw new EngineError('invalid_input', `${file}: onnxruntime could not load it: ${(err as Error).message}`);
    }
    return new Session(
      session,
      file,
      provider,
      specs(session.inputMetadata),
      specs(session.outputMetadata),
      log,
      fallback,
    );
  }

  /** Checks every feed against the input metadata, then runs. `fetch` limits the outputs copied back. */
  async run(feeds: Readonly<Record<string, Tensor>>, fetch?: readonly string[]): Promise<Record<string, Tensor>> {
    try {
      checkFeeds(this.inputs, feeds); // a Tensor is a FeedInfo (type, dims): no copy per step
    } catch (err) {
      if (!(err instanceof FeedError)) throw err;
      this.log(`${this.file}: ${err.message}\nfeeds:\n  ${err.feeds.join('\n  ')}`);
      throw new EngineError('invalid_input', `${this.file}: ${err.message}`, { input: err.input, feeds: err.feeds });
    }
    try {
      return await (fetch ? this.session.run(feeds, fetch as string[]) : this.session.run(feeds));
    } catch (err) {
      // Shapes that fit the metadata but not each other (e.g. a mask shorter than past + sequence).
      const list = describeFeeds(feeds);
      this.log(`${this.file}: onnxruntime failed: ${(err as Error).message}\nfeeds:\n  ${list.join('\n  ')}`);
      throw new EngineError('internal', `${this.file}: onnxruntime failed: ${(err as Error).message}`, { feeds: list });
    }
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
