// The Settings page's state: the plain SettingsForm (settings-form.ts) over the studio API, its
// snapshots made reactive, plus what the page shows beside the form (the app and engine facts).
import type { AppInfo } from '../../../../common/api/contract';
import type { EngineInfo } from '../../../../common/api/engine-schemas';
import { studio } from '../shared/bridge';
import { SettingsForm, type SettingsDraft, type SettingsSnapshot } from './settings-form';

export class SettingsPage {
  state = $state.raw<SettingsSnapshot>(null as unknown as SettingsSnapshot);
  engine = $state.raw<EngineInfo | null>(null);
  app = $state.raw<AppInfo | null>(null);

  private readonly form = new SettingsForm(studio, (s) => (this.state = s));

  constructor() {
    this.state = this.form.snapshot;
  }

  async load(): Promise<void> {
    // The facts are extras: a failure there leaves them out, the form still loads.
    const [engine, app] = await Promise.all([
      studio.engine.info({}).catch(() => null),
      studio.app.info({}).catch(() => null),
      this.form.load(),
    ]);
    this.engine = engine;
    this.app = app;
  }

  edit = <K extends keyof SettingsDraft>(key: K, value: SettingsDraft[K]): void => this.form.edit(key, value);
  revert = (): void => this.form.revert();
  save = (): Promise<boolean> => this.form.save();
}
