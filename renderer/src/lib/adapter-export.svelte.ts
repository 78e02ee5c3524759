// Exporting one adapter as a PEFT folder (adapter_config.json, adapter_model.safetensors and the
// pskills.json sidecar) through adapters.export; the folder field, the written files or the error.
import type { ExportResult } from '../../../common/api/adapter-schemas';
import type { z } from 'zod';
import { exportDirProblem } from './adapter-actions';
import { studio } from './bridge';
import { toUiError, type UiError } from './errors';

export type ExportStatus = 'idle' | 'running' | 'done' | 'failed';

/** A folder next to the data folder's other files: `<dataDir>/exports/<id>`, with its separator. */
export function suggestedExportDir(dataDir: string, id: string): string {
  const sep = dataDir.includes('\\') && !dataDir.includes('/') ? '\\' : '/';
  return `${dataDir.replace(/[\\/]+$/, '')}${sep}exports${sep}adapter-${id}`;
}

export class AdapterExport {
  dir = $state('');
  /** True once the user typed a folder: then choosing another adapter keeps it. */
  edited = $state(false);
  status = $state<ExportStatus>('idle');
  result = $state.raw<z.infer<typeof ExportResult> | null>(null);
  error = $state.raw<UiError | null>(null);
  /** The adapter the result or error belongs to. */
  forId = $state<string | null>(null);

  /** A new adapter was opened: forget the last outcome, suggest a folder unless one was typed. */
  reset(id: string, suggestion: string | null): void {
    if (this.status === 'running') return;
    this.status = 'idle';
    this.result = null;
    this.error = null;
    this.forId = id;
    if (!this.edited && suggestion) this.dir = suggestion;
  }

  setDir(dir: string): void {
    this.dir = dir;
    this.edited = true;
  }

  async run(id: string): Promise<void> {
    const dir = this.dir.trim();
    if (this.status === 'running') return;
    this.forId = id;
    this.result = null;
    this.error = null;
    // Named here, in the field's words: the API would answer with its field name, `dir`.
    const problem = exportDirProblem(dir);
    if (problem) {
      this.status = 'failed';
      this.error = { code: 'invalid_input', message: problem };
      return;
    }
    this.status = 'running';
    try {
      this.result = await studio.adapters.export({ id, dir });
      this.status = 'done';
    } catch (err) {
      this.error = toUiError(err);
      this.status = 'failed';
    }
  }
}
