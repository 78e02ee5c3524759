// Loads that may overlap (a new search while the last one is on its way): only the newest call's
// answer or error is kept, and only it ends the loading state.
import { toUiError, type UiError } from './errors';

export interface LatestHandlers<T> {
  busy: (loading: boolean) => void;
  keep: (value: T) => void;
  fail: (error: UiError) => void;
}

export class Latest {
  private seq = 0;

  async run<T>(fetch: () => Promise<T>, on: LatestHandlers<T>): Promise<void> {
    const seq = ++this.seq;
    on.busy(true);
    try {
      const value = await fetch();
      if (seq === this.seq) on.keep(value);
    } catch (err) {
      if (seq === this.seq) on.fail(toUiError(err));
    } finally {
      if (seq === this.seq) on.busy(false);
    }
  }

  /** Drops the answer of any call still on its way. */
  cancel(): void {
    this.seq++;
  }
}
