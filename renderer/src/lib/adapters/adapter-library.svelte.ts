// The adapter library as the Adapters page and the sidebar show it: every stored adapter, newest
// first, from adapters.list.
import type { AdapterSummary } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import type { UiError } from '../shared/errors';
import { Latest } from '../shared/latest';

export class AdapterLibrary {
  adapters = $state.raw<AdapterSummary[]>([]);
  loading = $state(false);
  loaded = $state(false);
  error = $state.raw<UiError | null>(null);

  private readonly latest = new Latest();

  async refresh(): Promise<void> {
    await this.latest.run(() => studio.adapters.list({}), {
      busy: (on) => (this.loading = on),
      keep: (adapters) => {
        this.adapters = adapters;
        this.error = null;
        this.loaded = true;
      },
      fail: (error) => (this.error = error),
    });
  }

  /** The stored adapter with this id (or id prefix), if the list has it. */
  find(id: string): AdapterSummary | undefined {
    return this.adapters.find((a) => a.id === id || a.key.startsWith(id));
  }

  /** The adapters made from this one (merges and EMA versions that name it in their lineage). */
  childrenOf(key: string): AdapterSummary[] {
    return this.adapters.filter((a) => a.lineage.some((l) => key.startsWith(l.id)));
  }

  dispose(): void {
    this.latest.cancel();
  }
}
