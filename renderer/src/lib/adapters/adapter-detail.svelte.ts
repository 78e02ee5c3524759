// One adapter opened on the Adapters page: its detail (shapes and ‖ΔW‖ statistics) from adapters.get,
// and the export form's state.
import type { AdapterDetail } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import type { UiError } from '../shared/errors';
import { Latest } from '../shared/latest';

export class AdapterInspector {
  detail = $state.raw<AdapterDetail | null>(null);
  error = $state.raw<UiError | null>(null);
  loading = $state(false);

  private readonly latest = new Latest();

  async load(id: string): Promise<void> {
    await this.latest.run(() => studio.adapters.get({ id }), {
      busy: (on) => (this.loading = on),
      keep: (detail) => {
        this.detail = detail;
        this.error = null;
      },
      fail: (error) => {
        this.detail = null;
        this.error = error;
      },
    });
  }

  clear(): void {
    this.latest.cancel();
    this.detail = null;
    this.error = null;
    this.loading = false;
  }
}
