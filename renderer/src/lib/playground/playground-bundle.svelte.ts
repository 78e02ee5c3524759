// The engine's current bundle as the Playground shows it: engine.info, loading a folder or the
// default bundle, and the last load error (with its StudioError code) for the inline notice.
import type { EngineInfo } from '../../../../common/api/engine-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export class EngineBundle {
  info = $state.raw<EngineInfo | null>(null);
  /** The folder field; filled with the loaded bundle's folder after a load. */
  dir = $state('');
  /** What is being loaded right now: a folder, 'default', or null when idle. */
  loading = $state<string | null>(null);
  error = $state.raw<UiError | null>(null);

  get loaded(): boolean {
    return this.info?.loaded === true;
  }

  async refresh(): Promise<void> {
    try {
      this.info = await studio.engine.info({});
      if (this.info.dir && !this.dir) this.dir = this.info.dir;
    } catch (err) {
      this.error = toUiError(err);
    }
  }

  /** Loads the folder in the field. */
  loadDir(): Promise<void> {
    const dir = this.dir.trim();
    return dir ? this.load(dir) : Promise.resolve();
  }

  /** Loads resources/bundles/default (a not_found error when the app ships none yet). */
  loadDefault(): Promise<void> {
    return this.load(null);
  }

  private async load(dir: string | null): Promise<void> {
    if (this.loading !== null) return;
    this.loading = dir ?? 'default';
    this.error = null;
    try {
      this.info = await studio.engine.loadBundle(dir === null ? {} : { dir });
      if (this.info.dir) this.dir = this.info.dir;
    } catch (err) {
      this.error = toUiError(err);
    } finally {
      this.loading = null;
    }
  }
}
