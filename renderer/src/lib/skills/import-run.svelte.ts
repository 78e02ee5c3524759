// One import from an npm spec, a folder or a .tgz (a path, or a dropped file's bytes): progress events
// as they arrive, per-file skip reasons, cancellation and the final result.
import type { StreamHandle } from '../../../../common/api/define';
import type { ImportProgress, ImportResult, SkipRecord } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export type ImportStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export class ImportRun {
  source = $state('');
  status = $state<ImportStatus>('idle');
  progress = $state.raw<ImportProgress | null>(null);
  skipped = $state.raw<SkipRecord[]>([]);
  result = $state.raw<ImportResult | null>(null);
  error = $state.raw<UiError | null>(null);
  cancelling = $state(false);

  private handle: StreamHandle<ImportResult> | null = null;

  constructor(private readonly onFinished: () => void) {}

  get running(): boolean {
    return this.status === 'running';
  }

  async start(): Promise<void> {
    const source = this.source.trim();
    if (!source || this.running) return;
    await this.follow(studio.import.run({ source }, (event) => this.onEvent(event)));
  }

  /** A dropped .tgz without a path (a browser tab): its bytes go to import.upload. */
  async upload(fileName: string, data: string): Promise<void> {
    if (this.running) return;
    this.source = fileName;
    await this.follow(studio.import.upload({ fileName, data }, (event) => this.onEvent(event)));
    // The archive is kept in the data folder: its path imports it again, as the provenance names it.
    if (this.result) this.source = this.result.source;
  }

  private async follow(handle: StreamHandle<ImportResult>): Promise<void> {
    this.status = 'running';
    this.progress = null;
    this.skipped = [];
    this.result = null;
    this.error = null;
    this.cancelling = false;
    this.handle = handle;
    try {
      this.result = await handle.result;
      this.status = 'done';
    } catch (err) {
      this.error = toUiError(err);
      this.status = this.error.code === 'cancelled' ? 'cancelled' : 'failed';
    } finally {
      this.handle = null;
      this.cancelling = false;
      this.onFinished();
    }
  }

  cancel(): void {
    if (!this.handle) return;
    this.cancelling = true;
    this.handle.cancel();
  }

  /** Back to an empty form (the dialog was closed after a finished run). */
  reset(): void {
    if (this.running) return;
    this.status = 'idle';
    this.progress = null;
    this.skipped = [];
    this.result = null;
    this.error = null;
  }

  private onEvent(event: ImportProgress): void {
    this.progress = event;
    if (event.skipped) this.skipped = [...this.skipped, event.skipped];
  }
}
