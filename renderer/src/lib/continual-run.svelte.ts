// The Continual page's state: the plain ContinualRunner (continual-run.ts) over the studio API, its
// snapshots made reactive, and the form.
import type { StudioApi } from '../../../common/api/contract';
import { studio } from './bridge';
import { ContinualRunner, DEFAULT_FORM, type ContinualForm, type ContinualSnapshot } from './continual-run';

export class ContinualPageState {
  state = $state.raw<ContinualSnapshot>(null as unknown as ContinualSnapshot);
  form = $state<ContinualForm>({ ...DEFAULT_FORM });

  private readonly runner: ContinualRunner;

  /** onEnded: a run ended (its lessons and adapters are in the library now). */
  constructor(onEnded: () => void, api: Pick<StudioApi, 'continual'> = studio) {
    this.runner = new ContinualRunner(api, (s) => (this.state = s), onEnded);
    this.state = this.runner.snapshot;
  }

  get running(): boolean {
    return this.state.status === 'running';
  }

  start = (): Promise<boolean> => this.runner.start($state.snapshot(this.form));
  cancel = (): void => this.runner.cancel();
  resume = (): Promise<boolean> => this.runner.resume();
}
