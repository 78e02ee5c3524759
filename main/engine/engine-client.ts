// The engine off the main thread: compile and generate run in engine-worker.ts, which holds its own
// sessions of the same bundle folder. Callers get compileSkill's and generateBatch's contracts: the
// compiled adapter comes back transferred and is folded and checked here; tokens stream back as the
// worker picks them.
import type { Worker } from 'node:worker_threads';
import { ErrorCode } from '../../common/errors';
import { startWorker, workerFile } from '../threads';
import { checkAdapterFits, foldAdapter, type EngineAdapter } from './adapter';
import type { Bundle } from './bundle';
import type { CompiledSkill, CompileOptions } from './compile';
import type { BundleRef, EngineReply, EngineRequest } from './engine-worker';
import { EngineError } from './errors';
import type { DistillOptions, DistillResult } from './distill';
import type { GenerateOptions, GenerateRequest, RowResult, RowTokenEvent } from './generate';
import type { PracticeQuestion } from '../../common/distill/practice';
import type { Bucket } from './train-step';

type Listener = (m: EngineReply) => void;

function rebuild(e: Extract<EngineReply, { type: 'error' }>['error']): EngineError {
  const code = ErrorCode.safeParse(e.code);
  return new EngineError(code.success ? code.data : 'internal', e.message, e.details);
}

export class EngineWorker {
  private worker: Worker | null = null;
  /** Per job: its reply handler, and what to do if the worker dies under it. */
  private readonly jobs = new Map<number, { onReply: Listener; onLost: (err: EngineError) => void }>();
  private readonly tokens = new WeakMap<Bundle, number>();
  private readonly adapterIds = new WeakMap<EngineAdapter, number>();
  /** Skills being distilled (the caller's key, e.g. name@version): a second one at once is refused. */
  private readonly distilling = new Set<string>();
  private nextToken = 1;
  private nextId = 1;

  constructor(private readonly file: string = workerFile('engine-worker', import.meta.url)) {}

  /** compileSkill(bundle, text, options), run in the worker. */
  compile(bundle: Bundle, text: string, options: CompileOptions = {}): Promise<CompiledSkill> {
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(new EngineError('cancelled', 'compile cancelled'));
    return new Promise<CompiledSkill>((resolve, reject) => {
      const id = this.start(
        { type: 'compile', id: this.nextId, bundle: this.ref(bundle), text },
        signal,
        (m) => {
          if (m.type === 'progress') return onProgress?.({ chunk: m.chunk, chunks: m.chunks, tokens: m.tokens });
          this.end(id, signal);
          if (m.type === 'error') return reject(rebuild(m.error));
          if (m.type !== 'compiled') return;
          try {
            const engine = foldAdapter(m.value.adapter);
            checkAdapterFits(bundle.manifest, engine);
            resolve({ ...m.value, engine });
          } catch (err) {
            reject(err as Error);
          }
        },
        reject,
      );
    });
  }

  /** distillSkill(bundle, skill, questions, options), run in the worker. `key` names the skill: while one
   * distillation of it runs, another is refused with a reason (two would race to store an adapter). */
  distill(
    bundle: Bundle,
    key: string,
    skill: string,
    questions: readonly PracticeQuestion[],
    options: DistillOptions = {},
  ): Promise<DistillResult> {
    const { signal, onProgress, init = null, ...rest } = options;
    if (signal?.aborted) return Promise.reject(new EngineError('cancelled', 'distillation cancelled'));
    if (this.distilling.has(key))
      return Promise.reject(
        new EngineError('conflict', `${key} is already being distilled; wait for it to finish or cancel it first`),
      );
    this.distilling.add(key);
    return new Promise<DistillResult>((resolve, reject) => {
      const done = (fn: () => void) => {
        this.distilling.delete(key);
        fn();
      };
      const id = this.start(
        {
          type: 'distill',
          id: this.nextId,
          bundle: this.ref(bundle),
          skill,
          questions: [...questions],
          init,
          options: rest,
        },
        signal,
        (m) => {
          if (m.type === 'distill-progress') return onProgress?.(m.progress);
          this.end(id, signal);
          if (m.type === 'error') return done(() => reject(rebuild(m.error)));
          if (m.type === 'distilled') done(() => resolve(m.value));
        },
        (err) => done(() => reject(err)),
      );
    });
  }

  /** timeTrainStep(bundle, bucket), run in the worker: seconds per train step of that bucket here. */
  timeTrainStep(bundle: Bundle, bucket: Bucket): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const id = this.start(
        { type: 'time-step', id: this.nextId, bundle: this.ref(bundle), bucket },
        undefined,
        (m) => {
          this.end(id, undefined);
          if (m.type === 'error') return reject(rebuild(m.error));
          if (m.type === 'step-timed') resolve(m.seconds);
        },
        reject,
      );
    });
  }

  /** generateBatch(bundle, requests, options), run in the worker; tokens are yielded as they arrive. */
  async *generateBatch(
    bundle: Bundle,
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
    const wire = requests.map((r) => ({
      ...r,
      adapter: r.adapter ? { id: this.adapterId(r.adapter), value: r.adapter } : null,
    }));
    const id = this.start(
      { type: 'generate', id: this.nextId, bundle: this.ref(bundle), requests: wire },
      signal,
      push,
      push,
    );
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
      if (!finished) this.worker?.postMessage({ type: 'cancel', id } satisfies EngineRequest);
      this.end(id, signal);
    }
  }

  async dispose(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.failAll('disposed');
    await w?.terminate();
  }

  private ref(bundle: Bundle): BundleRef {
    let token = this.tokens.get(bundle);
    if (token === undefined) this.tokens.set(bundle, (token = this.nextToken++));
    return { token, dir: bundle.dir, provider: bundle.provider.requested };
  }

  private adapterId(adapter: EngineAdapter): number {
    let id = this.adapterIds.get(adapter);
    if (id === undefined) this.adapterIds.set(adapter, (id = this.nextId++));
    return id;
  }

  private readonly aborts = new Map<number, () => void>();

  private start(
    req: Exclude<EngineRequest, { type: 'cancel' }>,
    signal: AbortSignal | undefined,
    onReply: Listener,
    onLost: (err: EngineError) => void,
  ): number {
    const id = this.nextId++;
    req.id = id;
    this.jobs.set(id, { onReply, onLost });
    const w = this.spawn();
    w.ref();
    w.postMessage(req);
    if (signal) {
      const onAbort = () => this.worker?.postMessage({ type: 'cancel', id } satisfies EngineRequest);
      this.aborts.set(id, onAbort);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
    }
    return id;
  }

  private end(id: number, signal: AbortSignal | undefined): void {
    this.jobs.delete(id);
    const onAbort = this.aborts.get(id);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    this.aborts.delete(id);
    if (this.jobs.size === 0) this.worker?.unref(); // idle, the worker must not keep the process alive
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(this.file);
    w.on('message', (m: EngineReply) => this.jobs.get(m.id)?.onReply(m));
    w.on('error', (err) => this.lost(w, `failed (${err.message})`));
    w.on('exit', (code) => this.lost(w, `exited with code ${code}`));
    this.worker = w;
    return w;
  }

  /** The worker died: every job it held fails; the next one starts a fresh worker. */
  private lost(w: Worker, why: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.failAll(why);
  }

  private failAll(why: string): void {
    for (const [id, job] of [...this.jobs]) {
      this.jobs.delete(id);
      job.onLost(new EngineError('internal', `engine worker ${why} during a compile or generation`));
    }
  }
}

let shared: EngineWorker | null = null;

/** The process's engine worker, started on first use; idle, it does not keep the process alive. */
export function sharedEngine(): EngineWorker {
  return (shared ??= new EngineWorker());
}
