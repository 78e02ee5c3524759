// Compiling many skills in one go (the Library's "Compile selected"): one adapters.compile stream at a
// time, in the order given, with per-skill progress and outcome; Cancel stops the running compile and
// skips the rest. A skill that fails does not stop the others. Plain TypeScript with the API passed in,
// so the unit tests drive it over the in-memory transport; batch-compile.svelte.ts makes it reactive.
import type { CompileResult } from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import type { StreamHandle } from '../../../../common/api/define';
import { toUiError, type UiError } from '../shared/errors';

export type BatchItemStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface BatchItem {
  name: string;
  status: BatchItemStatus;
  /** Encoder chunks done of `chunks`, while it runs. */
  progress: { chunk: number; chunks: number } | null;
  result: { adapterId: string; cached: boolean; ms: number; version: number } | null;
  error: UiError | null;
}

export interface BatchSnapshot {
  items: BatchItem[];
  running: boolean;
  cancelling: boolean;
}

export interface BatchCounts {
  done: number;
  cached: number;
  failed: number;
  cancelled: number;
  queued: number;
  total: number;
}

export function batchCounts(items: readonly BatchItem[]): BatchCounts {
  const c: BatchCounts = { done: 0, cached: 0, failed: 0, cancelled: 0, queued: 0, total: items.length };
  for (const i of items) {
    if (i.status === 'done') {
      c.done++;
      if (i.result?.cached) c.cached++;
    } else if (i.status === 'failed') c.failed++;
    else if (i.status === 'cancelled') c.cancelled++;
    else c.queued++; // queued or running
  }
  return c;
}

/** Fraction of the batch finished, counting the running skill's chunks. */
export function batchFraction(items: readonly BatchItem[]): number {
  if (!items.length) return 0;
  let done = 0;
  for (const i of items) {
    if (i.status === 'running') done += i.progress && i.progress.chunks ? i.progress.chunk / i.progress.chunks : 0;
    else if (i.status !== 'queued') done += 1;
  }
  return done / items.length;
}

export class BatchCompiler {
  private items: BatchItem[] = [];
  private running = false;
  private cancelling = false;
  private handle: StreamHandle<CompileResult> | null = null;

  constructor(
    private readonly api: Pick<StudioApi, 'adapters'>,
    /** Every change, as a new snapshot (new arrays and items: safe for $state.raw). */
    private readonly onChange: (snapshot: BatchSnapshot) => void,
    /** The batch ended having compiled at least one adapter. */
    private readonly onCompiled: () => void = () => {},
  ) {}

  get busy(): boolean {
    return this.running;
  }

  /** Compiles the latest version of each skill; ignored while a batch runs. */
  async start(names: readonly string[]): Promise<void> {
    if (this.running || names.length === 0) return;
    this.running = true;
    this.cancelling = false;
    this.items = [...new Set(names)].map((name) => ({
      name,
      status: 'queued',
      progress: null,
      result: null,
      error: null,
    }));
    this.emit();
    let compiled = false;
    for (let i = 0; i < this.items.length; i++) {
      if (this.cancelling) {
        this.update(i, { status: 'cancelled' });
        continue;
      }
      this.update(i, { status: 'running' });
      const handle = this.api.adapters.compile({ name: this.items[i]!.name }, (p) =>
        this.update(i, { progress: { chunk: p.chunk, chunks: p.chunks } }),
      );
      this.handle = handle;
      try {
        const r = await handle.result;
        compiled ||= !r.cached;
        this.update(i, {
          status: 'done',
          result: { adapterId: r.adapter.id, cached: r.cached, ms: r.ms, version: r.skill.version },
        });
      } catch (err) {
        const error = toUiError(err);
        this.update(i, error.code === 'cancelled' ? { status: 'cancelled' } : { status: 'failed', error });
      } finally {
        this.handle = null;
      }
    }
    this.running = false;
    this.cancelling = false;
    this.emit();
    if (compiled) this.onCompiled();
  }

  /** Stops the compile that runs (it stores nothing) and skips the skills after it. */
  cancel(): void {
    if (!this.running) return;
    this.cancelling = true;
    this.emit();
    this.handle?.cancel();
  }

  private update(i: number, patch: Partial<BatchItem>): void {
    this.items = this.items.map((item, j) => (j === i ? { ...item, ...patch } : item));
    this.emit();
  }

  private emit(): void {
    this.onChange({ items: this.items, running: this.running, cancelling: this.cancelling });
  }
}
