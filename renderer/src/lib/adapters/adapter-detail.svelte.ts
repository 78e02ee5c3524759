// One adapter opened on the Adapters page: its detail (shapes and ‖ΔW‖ statistics) from adapters.get,
// and the export form's state.
import type { AdapterDetail } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export class AdapterInspector {
  detail = $state.raw<AdapterDetail | null>(null);
  error = $state.raw<UiError | null>(null);
  loading = $state(false);

  private seq = 0;

  async load(id: string): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    try {
      const detail = await studio.adapters.get({ id });
      if (seq !== this.seq) return;
      this.detail = detail;
      this.error = null;
    } catch (err) {
      if (seq !== this.seq) return;
      this.detail = null;
      this.error = toUiError(err);
    } finally {
      if (seq === this.seq) this.loading = false;
    }
  }

  clear(): void {
    this.seq++;
    this.detail = null;
    this.error = null;
    this.loading = false;
  }
}
