// The main-thread side of a worker_threads worker, shared by the engine and algebra clients: the
// worker starts on the first job, holds the process open only while a job is out, and a worker that
// dies fails every job it held (the next job starts a fresh one). Requests and replies carry the job id.
import type { Worker } from 'node:worker_threads';
import { startWorker } from './threads';

interface Job<Reply> {
  onReply(m: Reply): void;
  onLost(why: string): void;
}

export class WorkerClient<Request extends { id: number }, Reply extends { id: number }> {
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, Job<Reply>>();
  private nextId = 1;

  constructor(
    private readonly file: string,
    private readonly hooks: {
      /** The worker stopped (a client that mirrors the worker's state resets it here). */
      onGone?: () => void;
      /** A message for no job (e.g. a log line). */
      onStray?: (m: Reply) => void;
    } = {},
  ) {}

  /** A fresh id for a job or anything else the worker keys (ids never repeat within a client). */
  id(): number {
    return this.nextId++;
  }

  /** Posts `req` and routes the replies that carry its id to `onReply` until end(req.id). */
  start(
    req: Request,
    onReply: (m: Reply) => void,
    onLost: (why: string) => void,
    transfer: ArrayBuffer[] = [],
  ): number {
    const w = this.spawn();
    this.jobs.set(req.id, { onReply, onLost });
    w.ref(); // keep the process alive while a job is out
    w.postMessage(req, transfer);
    return req.id;
  }

  /** A message that starts no job (a cancel); dropped when no worker runs. */
  post(m: Request): void {
    this.worker?.postMessage(m);
  }

  /** The job is over: its replies are ignored from now on. */
  end(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.worker?.unref(); // idle, the worker must not keep the process alive
  }

  /** Stops the worker without failing its jobs (the caller settles them); the next job starts a new one. */
  kill(): void {
    const w = this.worker;
    this.worker = null; // its exit event is then ignored
    this.hooks.onGone?.();
    void w?.terminate();
  }

  /** Fails every job with `why` and stops the worker. */
  async dispose(why = 'disposed'): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.hooks.onGone?.();
    this.failAll(why);
    await w?.terminate();
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(this.file);
    w.on('message', (m: Reply) => {
      if (this.worker !== w) return;
      const job = this.jobs.get(m.id);
      if (job) job.onReply(m);
      else this.hooks.onStray?.(m);
    });
    w.on('error', (err) => this.lost(w, `failed (${err.message})`));
    w.on('exit', (code) => this.lost(w, `exited with code ${code}`));
    this.worker = w;
    return w;
  }

  private lost(w: Worker, why: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.hooks.onGone?.();
    this.failAll(why);
  }

  private failAll(why: string): void {
    for (const [id, job] of [...this.jobs]) {
      this.jobs.delete(id);
      job.onLost(why);
    }
  }
}
