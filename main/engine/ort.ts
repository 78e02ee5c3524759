// The one module that imports onnxruntime-node (CONVENTIONS 7). Everything else sees `Session`,
// `Tensor` and the tensor factories below; every run's feeds are checked against the graph first.
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';
import { EngineError } from './errors';
import { checkFeeds, describeFeeds, FeedError, type TensorSpec } from './feed-check';

export type Tensor = ort.Tensor;
export type Provider = 'cpu' | 'cuda' | 'webgpu';
export type Logger = (message: string) => void;

export interface SessionOptions {
  /** Execution provider; falls back to cpu (with a logged reason) when it is unavailable. */
  provider?: Provider;
  /** Threads inside one operator. Default 1 on machines with ≤ 2 cores (threads contend there), else ORT's. */
  intraOpNumThreads?: number;
  logger?: Logger;
}

export const defaultLogger: Logger = (message) => console.warn(`[engine] ${message}`);

export function float32(data: Float32Array, dims: readonly number[]): Tensor {
  return new ort.Tensor('float32', data, dims);
}

export function int64(values: ArrayLike<number> | BigInt64Array, dims: readonly number[]): Tensor {
  const data = values instanceof BigInt64Array ? values : BigInt64Array.from(values, (v) => BigInt(v));
  return new ort.Tensor('int64', data, dims);
}

/** The float data of an output tensor (CPU outputs come back as Float32Array). */
export function floats(t: Tensor): Float32Array {
  if (!(t.data instanceof Float32Array)) throw new EngineError('internal', `expected float32 output, got ${t.type}`);
  return t.data;
}

export function defaultThreads(): number | undefined {
  return availableParallelism() <= 2 ? 1 : undefined;
}

function specs(meta: readonly ort.InferenceSession.ValueMetadata[]): TensorSpec[] {
  return meta.map((m) =>
    m.isTensor ? { name: m.name, type: m.type, dims: [...m.shape] } : { name: m.name, type: 'non-tensor', dims: [] },
  );
}

async function create(path: string, provider: Provider, threads: number | undefined): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(path, {
    executionProviders: [provider],
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    ...(threads === undefined ? {} : { intraOpNumThreads: threads, interOpNumThreads: 1 }),
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
  ) {}

  static async open(file: string, options: SessionOptions = {}): Promise<Session> {
    const log = options.logger ?? defaultLogger;
    const threads = options.intraOpNumThreads ?? defaultThreads();
    let provider = options.provider ?? 'cpu';
    const available = ort.listSupportedBackends().map((b) => b.name);
    if (!available.includes(provider)) {
      log(
        `execution provider '${provider}' is not in this onnxruntime-node build (it has ${available.join(', ')}); using cpu`,
      );
      provider = 'cpu';
    }
    let session: ort.InferenceSession;
    try {
      session = await create(file, provider, threads);
    } catch (err) {
      if (provider === 'cpu')
        throw new EngineError('invalid_input', `${file}: onnxruntime could not load it: ${(err as Error).message}`);
      log(`execution provider '${provider}' failed to start (${(err as Error).message.split('\n')[0]}); using cpu`);
      provider = 'cpu';
      session = await create(file, provider, threads);
    }
    return new Session(session, file, provider, specs(session.inputMetadata), specs(session.outputMetadata), log);
  }

  /** Checks every feed against the input metadata, then runs. `fetch` limits the outputs copied back. */
  async run(feeds: Readonly<Record<string, Tensor>>, fetch?: readonly string[]): Promise<Record<string, Tensor>> {
    const info = Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, { type: t.type, dims: t.dims }]));
    try {
      checkFeeds(this.inputs, info);
    } catch (err) {
      if (!(err instanceof FeedError)) throw err;
      this.log(`${this.file}: ${err.message}\nfeeds:\n  ${err.feeds.join('\n  ')}`);
      throw new EngineError('invalid_input', `${this.file}: ${err.message}`, { input: err.input, feeds: err.feeds });
    }
    try {
      return await (fetch ? this.session.run(feeds, fetch as string[]) : this.session.run(feeds));
    } catch (err) {
      // Shapes that fit the metadata but not each other (e.g. a mask shorter than past + sequence).
      const list = describeFeeds(info);
      this.log(`${this.file}: onnxruntime failed: ${(err as Error).message}\nfeeds:\n  ${list.join('\n  ')}`);
      throw new EngineError('internal', `${this.file}: onnxruntime failed: ${(err as Error).message}`, { feeds: list });
    }
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
