// GGUF headers read through the gate in a worker_threads worker (gguf-worker.ts), one file at a time,
// each with a deadline: the worker checks its own time budget, and a worker that does not answer by
// the budget plus a grace is terminated, the file reported as skipped and the next one read by a
// fresh worker. The caller's event loop never waits on a file (docs/security.md "GGUF files").
import type { Worker } from 'node:worker_threads';
import { GateError } from '../files/read-gate';
import { startWorker, workerFile } from '../threads';
import type { GgufInspection } from './gguf';
import { GGUF_LIMITS, GGUF_REFUSALS } from './gguf-limits';
import type { GgufReply, GgufRequest } from './gguf-worker';

export type GgufResult =
  | { ok: true; inspection: GgufInspection }
  | { ok: false; gate: boolean; missing: boolean; reason: string; message: string };

/** Time past the worker's own budget before it is given up on (a start under tsx takes ~1 s). */
const GRACE_MS = 3_000;

export class GgufReader {
  private worker: Worker | null = null;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting: ((m: GgufReply) => void) | null = null;

  constructor(
    private readonly file = workerFile('gguf-worker', import.meta.url),
    private readonly budgetMs: number = GGUF_LIMITS.budgetMs,
    private readonly graceMs: number = GRACE_MS,
  ) {}

  /** `path` through the gate; never throws. Calls run one after another. */
  inspect(path: string): Promise<GgufResult> {
    const run = this.queue.then(() => this.one(path));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** A summary, or the gate's (or the importer check's) refusal thrown as a StudioError. */
  async read(path: string): Promise<GgufInspection> {
    const r = await this.inspect(path);
    if (r.ok) return r.inspection;
    throw r.gate ? new GateError(path, r.reason, r.missing ? 'not_found' : 'invalid_input') : new Error(r.message);
  }

  async dispose(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private spawn(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(this.file);
    w.on('message', (m: GgufReply) => this.waiting?.(m));
    w.on('error', () => this.lose(w));
    w.on('exit', () => this.lose(w));
    w.unref();
    this.worker = w;
    return w;
  }

  private lose(w: Worker): void {
    if (this.worker === w) this.worker = null;
  }

  private one(path: string): Promise<GgufResult> {
    const id = this.nextId++;
    const w = this.spawn();
    return new Promise((resolve) => {
      const done = (r: GgufResult) => {
        clearTimeout(timer);
        w.off('exit', onExit);
        this.waiting = null;
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.lose(w);
        void w.terminate(); // not awaited: a thread stuck in a system call must not hold us
        const reason = `no answer within the ${this.budgetMs.toLocaleString('en-US')} ms ${GGUF_REFUSALS.budget} for a GGUF header; skipped`;
        done({ ok: false, gate: true, missing: false, reason, message: `${path}: ${reason}` });
      }, this.budgetMs + this.graceMs);
      const onExit = (code: number) => {
        const reason = `the header reader stopped (exit ${code}); skipped`;
        done({ ok: false, gate: true, missing: false, reason, message: `${path}: ${reason}` });
      };
      w.once('exit', onExit);
      this.waiting = (m) => {
        if (m.id !== id) return;
        done(m.ok ? { ok: true, inspection: m.inspection } : m);
      };
      w.postMessage({ id, path, budgetMs: this.budgetMs } satisfies GgufRequest);
    });
  }
}
