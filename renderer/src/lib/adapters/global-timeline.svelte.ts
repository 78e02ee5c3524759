// The global adapter's history (studio.ema.history), update (ema.update), rollback (ema.rollback) and
// two versions compared (global-compare.ts), for the
// timeline on the Adapters page. Only while a bundle is loaded: asking for the history would
// otherwise load the default bundle, which opening a page should never do.
import type { EmaHistory, GlobalVersion } from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import { toUiError, type UiError } from '../shared/errors';
import { Latest } from '../shared/latest';
import { compareVersions, emaUpdate, type VersionComparison } from './global-compare';

export class GlobalTimeline {
  history = $state.raw<EmaHistory | null>(null);
  error = $state.raw<UiError | null>(null);
  loading = $state(false);
  /** No bundle is loaded (engine.info), so there is no history to show. */
  noBundle = $state(false);
  /** The version a rollback is running for. */
  rollingBack = $state<number | null>(null);

  private readonly latest = new Latest();

  /** An EMA update is running. */
  updating = $state(false);
  /** The two versions picked for comparison (older first once both are set), and their comparison. */
  comparing = $state.raw<number[]>([]);
  comparison = $state.raw<VersionComparison | null>(null);
  compareError = $state.raw<UiError | null>(null);

  private compareSeq = 0;

  constructor(private readonly api: Pick<StudioApi, 'ema' | 'engine' | 'adapters'>) {}

  async load(): Promise<void> {
    const fetch = async () => {
      const info = await this.api.engine.info({});
      return { loaded: info.loaded, history: info.loaded ? await this.api.ema.history({}) : null };
    };
    await this.latest.run(fetch, {
      busy: (on) => (this.loading = on),
      keep: ({ loaded, history }) => {
        this.noBundle = !loaded;
        this.history = history;
        this.error = null;
      },
      fail: (error) => {
        this.history = null;
        this.error = error;
      },
    });
  }

  /** Appends a version that brings back `version`'s adapter, then reloads the history. */
  async rollback(version: number): Promise<boolean> {
    if (this.rollingBack !== null) return false;
    this.rollingBack = version;
    try {
      return await this.change(() => this.api.ema.rollback({ version }));
    } finally {
      this.rollingBack = null;
    }
  }

  /** ΔW_g ← (1−β)ΔW_g + βΔW of `adapterId`, appended as the next version; then reloads the history. */
  async update(adapterId: string, beta: number, rankBudget?: number): Promise<boolean> {
    if (this.updating) return false;
    this.updating = true;
    try {
      return await this.change(() => emaUpdate(this.api, adapterId, beta, rankBudget));
    } finally {
      this.updating = false;
    }
  }

  /** A change to the history, then the history again; false (with the error shown) when it failed. */
  private async change(run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run();
      await this.load();
      return true;
    } catch (err) {
      this.error = toUiError(err);
      return false;
    }
  }

  /** Ticks or unticks a version for comparison; with two ticked, compares them (a third replaces the older pick). */
  toggleCompare(version: number): void {
    const picked = this.comparing.includes(version)
      ? this.comparing.filter((v) => v !== version)
      : [...this.comparing, version].slice(-2);
    this.comparing = picked;
    this.comparison = null;
    this.compareError = null;
    const seq = ++this.compareSeq;
    const versions = this.history?.versions ?? [];
    const [a, b] = [...picked].sort((x, y) => x - y).map((n) => versions.find((v) => v.version === n));
    if (a && b) void this.compare(seq, a, b);
  }

  private async compare(seq: number, a: GlobalVersion, b: GlobalVersion): Promise<void> {
    try {
      const c = await compareVersions(this.api, a, b);
      if (seq === this.compareSeq) this.comparison = c;
    } catch (err) {
      if (seq === this.compareSeq) this.compareError = toUiError(err);
    }
  }
}
