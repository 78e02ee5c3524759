// Exporting one adapter through adapters.export: a PEFT folder (adapter_config.json,
// adapter_model.safetensors and the pskills.json sidecar), a llama.cpp LoRA .gguf file, or an Ollama
// folder (docs/guide.md "Back to llama.cpp, Ollama and LM Studio"); the path field, the format, the
// written files or the error.
import type { ExportFormat, ExportResult } from '../../../../common/api/adapter-schemas';
import type { z } from 'zod';
import { exportDirProblem } from './adapter-actions';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export type ExportStatus = 'idle' | 'running' | 'done' | 'failed';
export const EXPORT_FORMATS: { value: ExportFormat; label: string }[] = [
  { value: 'peft', label: 'PEFT folder (transformers, vLLM)' },
  { value: 'gguf', label: 'llama.cpp LoRA file (.gguf)' },
  { value: 'ollama', label: 'Ollama folder (adapter + Modelfile)' },
];

/** The path field for a format: a .gguf file for gguf, a folder otherwise. */
export function pathForFormat(path: string, format: ExportFormat): string {
  const bare = path.replace(/\.gguf$/, '');
  return format === 'gguf' ? `${bare}.gguf` : bare;
}

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
  format = $state<ExportFormat>('peft');
  /** GGUF tensors: float32 (exact) or float16 (half the size). */
  dtype = $state<'f32' | 'f16'>('f32');

  /** A new adapter was opened: forget the last outcome, suggest a folder unless one was typed. */
  reset(id: string, suggestion: string | null): void {
    if (this.status === 'running') return;
    this.status = 'idle';
    this.result = null;
    this.error = null;
    this.forId = id;
    this.overwrite = false;
    if (!this.edited && suggestion && pathForFormat(suggestion, this.format) !== this.dir) {
      this.dir = pathForFormat(suggestion, this.format);
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

  /** Another format: the path follows (a .gguf file or a folder), and a replace choice is asked again. */
  setFormat(format: ExportFormat): void {
    if (format === this.format) return;
    this.format = format;
    this.dir = pathForFormat(this.dir, format);
    this.exists = false;
    this.overwrite = false;
  }

  setDtype(dtype: 'f32' | 'f16'): void {
    this.dtype = dtype;
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
    const problem =
      exportDirProblem(dir) ??
      (this.format === 'gguf' && !dir.endsWith('.gguf') ? `${dir}: a llama.cpp LoRA file's name ends in .gguf.` : null);
    if (problem) {
      this.status = 'failed';
      this.error = { code: 'invalid_input', message: problem };
      return;
    }
    this.status = 'running';
    try {
      // Nothing is overwritten without an explicit choice (docs/security.md "Writing where the user says").
      const gguf = this.format === 'peft' ? {} : { format: this.format, dtype: this.dtype };
      this.result = await studio.adapters.export({ id, dir, ...gguf, ...(this.overwrite && { overwrite: true }) });
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
