// The engine off the main thread: engine-worker.ts holds every session of the bundle; this thread
// holds the bundle's files (tokenizer, chat template, manifest) and this client. Callers get
// compileSkill's, generateBatch's and distillSkill's contracts; adapters cross as WireAdapters and
// tokens stream back as the worker picks them.
import { ErrorCode } from '../../common/errors';
import { workerFile } from '../threads';
import { WorkerClient } from '../worker-client';
import { checkAdapterFits, engineAdapter, type EngineAdapter } from './adapter';
import { AdapterTable } from './adapter-table';
import { adapterFromWire, engineFromWire, engineToWire } from './adapter-wire';
import { readBundleFiles, type BundleInfo, type ProviderInfo } from './bundle-info';
import type { CompiledSkill, CompileOptions } from './compile';
import type { BundleRef, EngineReply, EngineRequest, WireRequest } from './engine-worker';
import { EngineError } from './errors';
import type { DistillOptions, DistillResult } from './distill';
import type { DistillPart } from './distill-parts';
import type { GenerateOptions, GenerateRequest, RowResult, RowTokenEvent } from './generate';
import { defaultLogger } from './logger';
import type { Provider } from './ort';
import type { PracticeQuestion } from '../../common/distill/practice';
import type { Bucket } from './train-step';

type ErrorReply = Extract<EngineReply, { type: 'error' }>;

function rebuild(e: ErrorReply['error']): EngineError {
  const code = ErrorCode.safeParse(e.code);
  return new EngineError(code.success ? code.data : 'internal', e.message, e.details);
}

/** A bundle opened through the worker: its files here, its sessions there until dispose(). */
export interface BundleHandle extends BundleInfo {
  dispose(): Promise<void>;
}

export interface OpenOptions {
  provider?: Provider;
  intraOpNumThreads?: number;
  /** Hash every file against bundle.json (default true; sizes are always checked). */
  verifyHashes?: boolean;
}

export class EngineWorker {
  private readonly client: WorkerClient<EngineRequest, EngineReply>;
  private readonly tokens = new WeakMap<BundleInfo, number>();
  private readonly adapterIds = new WeakMap<EngineAdapter, number>();
  /** The ids the worker keeps (the same table, reset with each fresh worker). */
  private readonly sent = new AdapterTable<true>();
  /** Skills being distilled (the caller's key, e.g. name@version): a second one at once is refused. */
  private readonly distilling = new Set<string>();
  private readonly threads = new WeakMap<BundleInfo, number | undefined>();
  private nextToken = 1;

  constructor(file: string = workerFile('engine-worker', import.meta.url)) {
    this.client = new WorkerClient(file, {
      onGone: () => this.sent.clear(),
      onStray: (m) => m.type === 'log' && defaultLogger(m.message), // the worker's engine log, said here
    });
  }

  /** The bundle's files read and checked here, its sessions opened in the worker. */
  async open(dir: string, options: OpenOptions = {}): Promise<BundleHandle> {
    const t0 = performance.now();
    const files = await readBundleFiles(dir, options);
    const token = this.nextToken++;
    const bundle: BundleRef = { token, dir, provider: options.provider ?? 'cpu' };
    if (options.intraOpNumThreads !== undefined) bundle.intraOpNumThreads = options.intraOpNumThreads;
    const provider = await this.call<ProviderInfo>({ type: 'open', id: this.client.id(), bundle }, undefined, (m) =>
      m.type === 'opened' ? { value: m.provider } : undefined,
    );
    const handle: BundleHandle = {
      ...files,
      loadMs: performance.now() - t0,
      provider,
      dispose: async () => this.client.post({ type: 'close', id: this.client.id(), token }),
    };
    this.tokens.set(handle, token);
    this.threads.set(handle, options.intraOpNumThreads);
    return handle;
  }

  /** compileSkill(bundle, text, options) with compileFactors run in the worker: the caller has checked the
   *  bundle (requireHypernet, as the instant recipe does before its key); the engine's form is made and
   *  checked to fit here, once. */
  async compile(bundle: BundleInfo, text: string, options: CompileOptions = {}): Promise<CompiledSkill> {
    const { signal, onProgress } = options;
    if (signal?.aborted) throw new EngineError('cancelled', 'compile cancelled');
    const req = { type: 'compile', id: this.client.id(), bundle: this.ref(bundle), text } as const;
    const value = await this.call(req, signal, (m) => {
      if (m.type === 'progress') onProgress?.({ chunk: m.chunk, chunks: m.chunks, tokens: m.tokens });
      return m.type === 'compiled' ? { value: m.value } : undefined;
    });
    // α = rank: the engine's form shares the algebra form's arrays (views into the one wire buffer).
    const adapter = adapterFromWire(value.adapter);
    const engine = engineAdapter(adapter.rank, adapter.targets);
    checkAdapterFits(bundle.manifest, engine);
    return { ...value, adapter, engine };
  }

  /** distillSkill(bundle, skill, questions, options), run in the worker. `key` names the skill: while one
   * distillation of it runs, another is refused with a reason (two would race to store an adapter). */
  distill(
    bundle: BundleInfo,
    key: string,
    skill: string,
    questions: readonly PracticeQuestion[],
    options: DistillOptions = {},
  ): Promise<DistillResult> {
    return this.distillParts(bundle, key, [{ skill, questions }], options);
  }

  /** distillParts(bundle, parts, options), run in the worker; `key` as for distill. */
  async distillParts(
    bundle: BundleInfo,
    key: string,
    parts: readonly DistillPart[],
    options: DistillOptions = {},
  ): Promise<DistillResult> {
    const { signal, onProgress, init = null, ...rest } = options;
    if (signal?.aborted) throw new EngineError('cancelled', 'distillation cancelled');
    if (this.distilling.has(key))
      throw new EngineError('conflict', `${key} is already being distilled; wait for it to finish or cancel it first`);
    this.distilling.add(key);
    try {
      const req: Extract<EngineRequest, { type: 'distill' }> = {
        type: 'distill',
        id: this.client.id(),
        bundle: this.ref(bundle),
        parts: parts.map((p) => ({ skill: p.skill, questions: [...p.questions] })),
        init: init && engineToWire(init),
        options: rest,
      };
      const value = await this.call(req, signal, (m) => {
        if (m.type === 'distill-progress') onProgress?.(m.progress);
        return m.type === 'distilled' ? { value: m.value } : undefined;
      });
      return { ...value, adapter: engineFromWire(value.adapter) };
    } finally {
      this.distilling.delete(key);
    }
  }

  /** timeTrainStep(bundle, bucket), run in the worker: seconds per train step of that bucket here. */
  timeTrainStep(bundle: BundleInfo, bucket: Bucket): Promise<number> {
    const req = { type: 'time-step', id: this.client.id(), bundle: this.ref(bundle), bucket } as const;
    return this.call(req, undefined, (m) => (m.type === 'step-timed' ? { value: m.seconds } : undefined));
  }

  /** generateBatch(bundle, requests, options), run in the worker; tokens are yielded as they arrive. */
  async *generateBatch(
    bundle: BundleInfo,
    requests: readonly GenerateRequest[],
    options: GenerateOptions = {},
  ): AsyncGenerator<RowTokenEvent, RowResult[]> {
    const { signal } = options;
    const inbox: (EngineReply | EngineError)[] = [];
    let wake: (() => void) | null = null;
    const push = (m: EngineReply | EngineError) => {
      inbox.push(m);
      wake?.();
    };
    const ref = this.ref(bundle);
    const wire: WireRequest[] = requests.map((r) => ({ ...r, adapter: r.adapter ? this.wire(r.adapter) : null }));
    const id = this.start({ type: 'generate', id: this.client.id(), bundle: ref, requests: wire }, signal, push);
    let finished = false;
    try {
      for (;;) {
        while (inbox.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        const m = inbox.shift()!;
        if (m instanceof EngineError) {
          finished = true;
          throw m;
        }
        if (m.type === 'token') yield m.event;
        else if (m.type === 'error') {
          finished = true;
          throw rebuild(m.error);
        } else if (m.type === 'generated') {
          finished = true;
          return m.value;
        }
      }
    } finally {
      // A consumer that stops early (break, return) cancels the rest of the generation.
      if (!finished) this.client.post({ type: 'cancel', id });
      this.end(id, signal);
    }
  }

  async dispose(): Promise<void> {
    await this.client.dispose();
  }

  private ref(bundle: BundleInfo): BundleRef {
    let token = this.tokens.get(bundle);
    if (token === undefined) this.tokens.set(bundle, (token = this.nextToken++));
    const ref: BundleRef = { token, dir: bundle.dir, provider: bundle.provider.requested };
    const threads = this.threads.get(bundle);
    if (threads !== undefined) ref.intraOpNumThreads = threads;
    return ref;
  }

  /** The adapter by id, with its factors when the worker does not keep them (the call order is the
   *  worker's: ids are taken here as the message is built and there as it arrives). */
  private wire(adapter: EngineAdapter): NonNullable<WireRequest['adapter']> {
    let id = this.adapterIds.get(adapter);
    if (id === undefined) this.adapterIds.set(adapter, (id = this.client.id()));
    if (this.sent.use(id)) return { id };
    this.sent.put(id, true);
    return { id, wire: engineToWire(adapter) };
  }

  private readonly aborts = new Map<number, () => void>();

  /** One job that ends with one result: `pick` returns it (or handles a progress message). */
  private call<T>(
    req: Exclude<EngineRequest, { type: 'cancel' | 'close' }>,
    signal: AbortSignal | undefined,
    pick: (m: EngineReply) => { value: T } | undefined,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.start(req, signal, (m) => {
        if (m instanceof EngineError) {
          this.end(id, signal);
          return reject(m);
        }
        if (m.type === 'error') {
          this.end(id, signal);
          return reject(rebuild(m.error));
        }
        const got = pick(m);
        if (!got) return;
        this.end(id, signal);
        resolve(got.value);
      });
    });
  }

  private start(
    req: Exclude<EngineRequest, { type: 'cancel' | 'close' }>,
    signal: AbortSignal | undefined,
    onReply: (m: EngineReply | EngineError) => void,
  ): number {
    const id = this.client.start(req, onReply, (why) =>
      onReply(new EngineError('internal', `engine worker ${why} during a compile or generation`)),
    );
    if (signal) {
      const onAbort = () => this.client.post({ type: 'cancel', id });
      this.aborts.set(id, onAbort);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
    }
    return id;
  }

  private end(id: number, signal: AbortSignal | undefined): void {
    this.client.end(id);
    const onAbort = this.aborts.get(id);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    this.aborts.delete(id);
  }
}

let shared: EngineWorker | null = null;

/** The process's engine worker, started on first use; idle, it does not keep the process alive. */
export function sharedEngine(): EngineWorker {
  return (shared ??= new EngineWorker());
}
