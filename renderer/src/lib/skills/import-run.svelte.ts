// One import from an npm spec, a folder or a .tgz (a path, or a dropped file's bytes): progress events
// as they arrive, per-file skip reasons, cancellation and the final result.
import type { ImportProgress, ImportResult, SkipRecord } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import { StreamRun, type RunStatus } from '../shared/stream-run.svelte';

export type ImportStatus = RunStatus;

export class ImportRun extends StreamRun<ImportProgress, ImportResult> {
  source = $state('');
  skipped = $state.raw<SkipRecord[]>([]);

  constructor(private readonly onFinished: () => void) {
    super();
  }

  async start(): Promise<void> {
    const source = this.source.trim();
    if (!source || this.running) return;
    await this.run((onEvent) => studio.import.run({ source }, onEvent));
  }

  /** A dropped .tgz without a path (a browser tab): its bytes go to import.upload. */
  async upload(fileName: string, data: string): Promise<void> {
    if (this.running) return;
    this.source = fileName;
    await this.run((onEvent) => studio.import.upload({ fileName, data }, onEvent));
    // The archive is kept in the data folder: its path imports it again, as the provenance names it.
    if (this.result) this.source = this.result.source;
  }

  private async run(open: Parameters<ImportRun['follow']>[0]): Promise<void> {
    this.skipped = [];
    await this.follow(open);
    this.onFinished();
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

  protected override onProgress(event: ImportProgress): void {
    if (event.skipped) this.skipped = [...this.skipped, event.skipped];
  }
}
