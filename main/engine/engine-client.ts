// Compiling off the main thread: the skill text goes to compile-worker.ts, which holds its own
// sessions of the same bundle folder; the adapter comes back transferred and is folded and checked
// here, so callers get the same CompiledSkill as from compileSkill.
import type { Worker } from 'node:worker_threads';
import { ErrorCode } from '../../common/errors';
import { startWorker, workerFile } from '../threads';
import { checkAdapterFits, foldAdapter } from './adapter';
import type { Bundle } from './bundle';
import type { CompiledSkill, CompileOptions } from './compile';
import type { CompileReply, CompileRequest } from './compile-worker';
import { EngineError } from './errors';

interface Job {
  bundle: Bundle;
  options: CompileOptions;
  resolve(c: CompiledSkill): void;
  reject(err: Error): void;
  onAbort?: () => void;
}

function rebuild(e: Extract<CompileReply, { type: 'error' }>['error']): EngineError {
  const code = ErrorCode.safeParse(e.code);
  return new EngineError(code.success ? code.data : 'internal', e.message, e.details);
}

export class CompileWorker {
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, Job>();
  private readonly tokens = new WeakMap<Bundle, number>();
  private nextToken = 1;
  private nextId = 1;

  constructor(private readonly file: string = workerFile('compile-worker', import.meta.url)) {}

  /** compileSkill(bundle, text, options), run in the worker. */
  compile(bundle: Bundle, text: string, options: CompileOptions = {}): Promise<CompiledSkill> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new EngineError('cancelled', 'compile cancelled'));
    let token = this.tokens.get(bundle);
    if (token === undefined) this.tokens.set(bundle, (token = this.nextToken++));
    const id = this.nextId++;
    return new Promise<CompiledSkill>((resolve, reject) => {
      const job: Job = { bundle, options, resolve, reject };
      this.jobs.set(id, job);
      const w = this.spawn();
      w.ref();
      const req: CompileRequest = {
        type: 'compile',
        id,
        bundle: { token, dir: bundle.dir, provider: bundle.provider.requested },
        text,
      };
      w.postMessage(req);
      if (signal) {
        job.onAbort = () => this.worker?.postMessage({ type: 'cancel', id } satisfies CompileRequest);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
    });
  }

  async dispose(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.failAll('disposed');
    await w?.terminate();
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(this.file);
    w.on('message', (m: CompileReply) => this.onReply(m));
    w.on('error', (err) => this.lost(w, `failed (${err.message})`));
    w.on('exit', (code) => this.lost(w, `exited with code ${code}`));
    this.worker = w;
    return w;
  }

  private onReply(m: CompileReply): void {
    const job = this.jobs.get(m.id);
    if (!job) return;
    if (m.type === 'progress') {
      job.options.onProgress?.({ chunk: m.chunk, chunks: m.chunks, tokens: m.tokens });
      return;
    }
    this.settle(m.id);
    if (m.type === 'error') return job.reject(rebuild(m.error));
    try {
      const engine = foldAdapter(m.value.adapter);
      checkAdapterFits(job.bundle.manifest, engine);
      job.resolve({ ...m.value, engine });
    } catch (err) {
      job.reject(err as Error);
    }
  }

  private settle(id: number): void {
    const job = this.jobs.get(id)!;
    this.jobs.delete(id);
    if (job.onAbort) job.options.signal?.removeEventListener('abort', job.onAbort);
    if (this.jobs.size === 0) this.worker?.unref(); // idle, the worker must not keep the process alive
  }

  /** The worker died: every compile it held fails; the next one starts a fresh worker. */
  private lost(w: Worker, why: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.failAll(why);
  }

  private failAll(why: string): void {
    for (const [id, job] of [...this.jobs]) {
      this.settle(id);
      job.reject(new EngineError('internal', `compile worker ${why} while compiling a skill for ${job.bundle.dir}`));
    }
  }
}

let shared: CompileWorker | null = null;

/** The process's compile worker, started on first use; idle, it does not keep the process alive. */
export function sharedCompiler(): CompileWorker {
  return (shared ??= new CompileWorker());
}
