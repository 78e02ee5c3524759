// The Library's "Compile selected" run, kept by StudioApp so it survives leaving the page: the plain
// BatchCompiler (batch-compile.ts) over the studio API, its snapshots made reactive.
import { batchCounts, batchFraction, BatchCompiler, type BatchItem } from './batch-compile';
import { studio } from '../shared/bridge';

export class BatchCompile {
  items = $state.raw<BatchItem[]>([]);
  running = $state(false);
  cancelling = $state(false);
  counts = $derived(batchCounts(this.items));
  fraction = $derived(batchFraction(this.items));
  /** The skill being compiled now, if any. */
  current = $derived(this.items.find((i) => i.status === 'running') ?? null);

  private readonly compiler: BatchCompiler;

  /** onCompiled: the batch ended having added adapters (the library's compiled column follows). */
  constructor(onCompiled: () => void) {
    this.compiler = new BatchCompiler(
      studio,
      (s) => {
        this.items = s.items;
        this.running = s.running;
        this.cancelling = s.cancelling;
      },
      onCompiled,
    );
  }

  start(names: readonly string[]): Promise<void> {
    return this.compiler.start(names);
  }

  cancel(): void {
    this.compiler.cancel();
  }

  /** Hides a finished batch's report. */
  clear(): void {
    if (!this.running) this.items = [];
  }
}
