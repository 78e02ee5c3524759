// The global adapter's history (studio.ema.history) and rollback (studio.ema.rollback), for the
// timeline on the Adapters page. Only while a bundle is loaded: asking for the history would
// otherwise load the default bundle, which opening a page should never do.
import type { EmaHistory } from '../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../common/api/contract';
import { toUiError, type UiError } from './errors';

export class GlobalTimeline {
  history = $state.raw<EmaHistory | null>(null);
  error = $state.raw<UiError | null>(null);
  loading = $state(false);
  /** No bundle is loaded (engine.info), so there is no history to show. */
  noBundle = $state(false);
  /** The version a rollback is running for. */
  rollingBack = $state<number | null>(null);

  private seq = 0;

  constructor(private readonly api: Pick<StudioApi, 'ema' | 'engine'>) {}

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    try {
      const info = await this.api.engine.info({});
      const history = info.loaded ? await this.api.ema.history({}) : null;
      if (seq !== this.seq) return;
      this.noBundle = !info.loaded;
      this.history = history;
      this.error = null;
    } catch (err) {
      if (seq !== this.seq) return;
      this.history = null;
      this.error = toUiError(err);
    } finally {
      if (seq === this.seq) this.loading = false;
    }
  }

  /** Appends a version that brings back `version`'s adapter, then reloads the history. */
  async rollback(version: number): Promise<boolean> {
    if (this.rollingBack !== null) return false;
    this.rollingBack = version;
    try {
      await this.api.ema.rollback({ version });
      await this.load();
      return true;
    } catch (err) {
      this.error = toUiError(err);
      return false;
    } finally {
      this.rollingBack = null;
    }
  }
}
