// The adapter algebra off the main thread: one worker_threads worker runs ALGEBRA_OPS jobs one at a
// time (merges of 4 adapters take seconds of pure JS, which would freeze the studio's event loop).
// Jobs queue here, not in the worker, so a cancel or a crash loses only the running job's inputs.
import { ownedBuffers, workerFile } from '../threads';
import { WorkerClient } from '../worker-client';
import type { AlgebraArg, AlgebraOp, AlgebraResult } from './algebra-ops';
import type { AlgebraReply, AlgebraRequest } from './algebra-worker';
import { AdapterValidationError } from './validate';

export interface WorkerEntry {
  /** A .js/.mjs worker script, or a .ts one (then started through tsx's loader). */
  readonly file: string;
}

export function defaultWorkerEntry(): WorkerEntry {
  return { file: workerFile('algebra-worker', import.meta.url) };
}

export interface AlgebraCallOptions {
  /** Move the input's typed arrays to the worker instead of copying them; the caller must not read
   *  them afterwards (they are detached). */
  readonly transfer?: boolean;
  /** Aborting stops the job (the worker is terminated if it is running) and rejects with AbortError. */
  readonly signal?: AbortSignal;
}

interface Job {
  id: number;
  op: AlgebraOp;
  arg: unknown;
  transfer: boolean;
  signal?: AbortSignal;
  onAbort: () => void;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

function abortError(op: string): Error {
  const err = new Error(`adapter algebra ${op} cancelled`);
  err.name = 'AbortError';
  return err;
}

/** Validation and range errors keep their class, so services still read them as bad input. */
function rebuild(op: string, e: Extract<AlgebraReply, { ok: false }>['error']): Error {
  if (e.name === 'AdapterValidationError' && e.why !== undefined)
    return new AdapterValidationError(e.where ?? {}, e.why);
  if (e.name === 'RangeError') return new RangeError(e.message);
  const err = new Error(`adapter algebra ${op} failed in the worker: ${e.message}`);
  if (e.stack) err.stack = `${err.message}\n  worker stack: ${e.stack}`;
  return err;
}

export class AlgebraWorker {
  private readonly client: WorkerClient<AlgebraRequest, AlgebraReply>;
  private running: Job | null = null;
  private readonly queue: Job[] = [];
  private disposed = false;

  constructor(entry: WorkerEntry = defaultWorkerEntry()) {
    this.client = new WorkerClient(entry.file);
  }

  run<K extends AlgebraOp>(op: K, arg: AlgebraArg<K>, options: AlgebraCallOptions = {}): Promise<AlgebraResult<K>> {
    if (this.disposed) return Promise.reject(new Error('adapter algebra worker is disposed'));
    const { signal, transfer = false } = options;
    if (signal?.aborted) return Promise.reject(abortError(op));
    return new Promise((resolve, reject) => {
      const job: Job = {
        id: this.client.id(),
        op,
        arg,
        transfer,
        signal,
        onAbort: () => this.abort(job),
        resolve: resolve as (v: unknown) => void,
        reject,
      };
      signal?.addEventListener('abort', job.onAbort, { once: true });
      this.queue.push(job);
      this.pump();
    });
  }

  /** Rejects every waiting job and stops the worker. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const jobs = [...(this.running ? [this.running] : []), ...this.queue.splice(0)];
    this.running = null;
    for (const job of jobs) this.settle(job, new Error(`adapter algebra worker disposed while ${job.op} waited`));
    await this.client.dispose();
  }

  private pump(): void {
    if (this.running || this.queue.length === 0) return;
    const job = this.queue.shift()!;
    this.running = job;
    try {
      this.client.start(
        { id: job.id, op: job.op, arg: job.arg },
        (reply) => {
          if (reply.ok) this.finish(job, null, reply.value);
          else this.finish(job, rebuild(job.op, reply.error));
        },
        (why) => this.finish(job, new Error(`adapter algebra worker ${why} while running ${job.op}`)),
        job.transfer ? ownedBuffers(job.arg) : [],
      );
    } catch (err) {
      this.finish(job, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private abort(job: Job): void {
    const i = this.queue.indexOf(job);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.settle(job, abortError(job.op));
    } else if (this.running === job) {
      this.client.kill(); // a running job stops only with its worker
      this.finish(job, abortError(job.op));
    }
  }

  private finish(job: Job, err: Error | null, value?: unknown): void {
    this.client.end(job.id);
    if (this.running === job) this.running = null;
    this.settle(job, err, value);
    this.pump();
  }

  private settle(job: Job, err: Error | null, value?: unknown): void {
    job.signal?.removeEventListener('abort', job.onAbort);
    if (err) job.reject(err);
    else job.resolve(value);
  }
}

let shared: AlgebraWorker | null = null;

/** The process's algebra worker, started on first use; idle, it does not keep the process alive. */
export function sharedAlgebra(): AlgebraWorker {
  return (shared ??= new AlgebraWorker());
}
