// Exporting one adapter as a PEFT folder (adapter_config.json, adapter_model.safetensors and the
// pskills.json sidecar) through adapters.export; the folder field, the written files or the error.
import type { ExportResult } from '../../../../common/api/adapter-schemas';
import type { z } from 'zod';
import { exportDirProblem } from './adapter-actions';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

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
  /** The folder holds an earlier export (the API said conflict, or we just wrote one): offer to replace it. */
  exists = $state(false);
  /** The person chose to replace that export; asked again for every other folder. */
  overwrite = $state(false);

  /** A new adapter was opened: forget the last outcome, suggest a folder unless one was typed. */
  reset(id: string, suggestion: string | null): void {
    if (this.status === 'running') return;
    this.status = 'idle';
    this.result = null;
    this.error = null;
    this.forId = id;
    this.overwrite = false;
    if (!this.edited && suggestion && suggestion !== this.dir) {
      this.dir = suggestion;
      this.exists = false;
    }
  }

  setDir(dir: string): void {
    if (dir !== this.dir) {
      this.exists = false;
      this.overwrite = false;
    }
    this.dir = dir;
    this.edited = true;
  }

  setOverwrite(on: boolean): void {
    this.overwrite = on;
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
      // Nothing is overwritten without an explicit choice (docs/security.md "Writing where the user says").
      this.result = await studio.adapters.export(this.overwrite ? { id, dir, overwrite: true } : { id, dir });
      this.status = 'done';
      this.exists = true;
      this.overwrite = false;
    } catch (err) {
      this.error = toUiError(err);
      this.status = 'failed';
      // adapters.export answers conflict only for a folder that holds an earlier export of ours.
      if (this.error.code === 'conflict') this.exists = true;
    }
  }
}
