// Deleting and importing adapters on the Adapters page, as plain classes over the studio API (so tests
// drive them over the in-memory transport). Delete first says what depends on the adapter, from the
// list and the global history on screen; the service checks again and its refusal is shown as sent.
// The import and export folder fields are checked here before anything is sent.
import type { AdapterSummary, AdapterWritten, GlobalVersion } from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import { isAbsolutePath } from '../../../../common/api/paths';
import { toUiError, type UiError } from '../shared/errors';

export interface Dependents {
  /** Merges and EMA versions whose lineage names the adapter. */
  children: AdapterSummary[];
  /** Global-adapter versions that are this adapter (history is kept, so these block the delete). */
  globalVersions: number[];
}

export function dependentsOf(
  adapter: AdapterSummary,
  library: readonly AdapterSummary[],
  history: readonly GlobalVersion[],
): Dependents {
  return {
    children: library.filter((a) => a.key !== adapter.key && a.lineage.some((l) => adapter.key.startsWith(l.id))),
    globalVersions: history.filter((v) => adapter.key.startsWith(v.adapter)).map((v) => v.version),
  };
}

export const blocksDelete = (d: Dependents): boolean => d.children.length > 0 || d.globalVersions.length > 0;

export interface RemovalSnapshot {
  target: AdapterSummary | null;
  dependents: Dependents | null;
  busy: boolean;
  error: UiError | null;
}

export class AdapterRemoval {
  private state: RemovalSnapshot = { target: null, dependents: null, busy: false, error: null };

  constructor(
    private readonly api: Pick<StudioApi, 'adapters'>,
    private readonly onChange: (s: RemovalSnapshot) => void = () => {},
    private readonly onDeleted: (id: string) => void = () => {},
  ) {}

  get snapshot(): RemovalSnapshot {
    return this.state;
  }

  /** Opens the confirmation for `target` with what the page knows depends on it. */
  ask(target: AdapterSummary, dependents: Dependents): void {
    if (!this.state.busy) this.set({ target, dependents, error: null });
  }

  close(): void {
    if (!this.state.busy) this.set({ target: null, dependents: null, error: null });
  }

  /** adapters.delete; true when deleted (the dialog closes), false with the API's error kept. */
  async confirm(): Promise<boolean> {
    const target = this.state.target;
    if (!target || this.state.busy) return false;
    this.set({ busy: true, error: null });
    try {
      await this.api.adapters.delete({ id: target.id });
      this.set({ busy: false, target: null, dependents: null });
      this.onDeleted(target.id);
      return true;
    } catch (err) {
      this.set({ busy: false, error: toUiError(err) });
      return false;
    }
  }

  private set(patch: Partial<RemovalSnapshot>): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }
}

export interface ImportSnapshot {
  dir: string;
  busy: boolean;
  result: AdapterWritten | null;
  error: UiError | null;
}

/** Why a folder field cannot be sent, in words; null when it can. */
export function importDirProblem(dir: string): string | null {
  const d = dir.trim();
  if (!d) return 'Give the PEFT folder to import (it holds adapter_config.json and adapter_model.safetensors).';
  if (!isAbsolutePath(d)) return `${d} is not an absolute path: give the full path of the folder.`;
  return null;
}

/** Why an export folder field cannot be sent, in words; null when it can. */
export function exportDirProblem(dir: string): string | null {
  const d = dir.trim();
  if (!d) return 'Give the folder to write the PEFT adapter to.';
  if (!isAbsolutePath(d)) return `${d} is not an absolute path: give the full path of the folder.`;
  return null;
}

export class AdapterImporter {
  private state: ImportSnapshot = { dir: '', busy: false, result: null, error: null };

  constructor(
    private readonly api: Pick<StudioApi, 'adapters'>,
    private readonly onChange: (s: ImportSnapshot) => void = () => {},
    private readonly onImported: (written: AdapterWritten) => void = () => {},
  ) {}

  get snapshot(): ImportSnapshot {
    return this.state;
  }

  setDir(dir: string): void {
    this.set({ dir, error: null, result: null });
  }

  /** adapters.import of the folder; true when stored (or found already stored). */
  async run(dir = this.state.dir): Promise<boolean> {
    if (this.state.busy) return false;
    const problem = importDirProblem(dir);
    this.set({ dir, result: null, error: problem ? { code: 'invalid_input', message: problem } : null });
    if (problem) return false;
    this.set({ busy: true });
    try {
      const result = await this.api.adapters.import({ dir: dir.trim() });
      this.set({ busy: false, result });
      this.onImported(result);
      return true;
    } catch (err) {
      this.set({ busy: false, error: toUiError(err) });
      return false;
    }
  }

  private set(patch: Partial<ImportSnapshot>): void {
    this.state = { ...this.state, ...patch };
    this.onChange(this.state);
  }
}
