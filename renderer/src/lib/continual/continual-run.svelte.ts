// The Continual page's state: the plain ContinualRunner (continual-run.ts) over the studio API, its
// snapshots made reactive, the form, and the run workspaces (continual.list / get / adopt / delete):
// each run's lessons and global adapter stay in its workspace until the user adopts them.
import type {
  ContinualAdoption,
  ContinualRunDetail,
  ContinualRunSummary,
} from '../../../../common/api/continual-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import { studio } from '../shared/bridge';
import { ContinualRunner, DEFAULT_FORM, type ContinualForm, type ContinualSnapshot } from './continual-run';
import { toUiError, type UiError } from '../shared/errors';

export class ContinualPageState {
  state = $state.raw<ContinualSnapshot>(null as unknown as ContinualSnapshot);
  form = $state<ContinualForm>({ ...DEFAULT_FORM });
  /** The run workspaces, newest first. */
  runs = $state.raw<ContinualRunSummary[]>([]);
  /** The run opened in the workspace panel. */
  detail = $state.raw<ContinualRunDetail | null>(null);
  adoptions = $state.raw<ContinualAdoption[]>([]);
  /** The last adopt's outcome: what was made, or the error (a name taken asks for another). */
  adopted = $state.raw<ContinualAdoption | null>(null);
  adoptError = $state.raw<{ episode: number | null; error: UiError } | null>(null);
  workspaceError = $state.raw<UiError | null>(null);

  private readonly runner: ContinualRunner;

  /** onEnded: a run ended. */
  constructor(
    onEnded: () => void,
    private readonly api: Pick<StudioApi, 'continual'> = studio,
  ) {
    this.runner = new ContinualRunner(
      api,
      (s) => {
        const fresh = s.run !== null && s.run !== this.state?.run;
        this.state = s;
        if (fresh) void this.refresh(s.run);
      },
      () => {
        onEnded();
        void this.refresh(this.state.run);
      },
    );
    this.state = this.runner.snapshot;
  }

  get running(): boolean {
    return this.state.status === 'running';
  }

  start = (): Promise<boolean> => this.runner.start($state.snapshot(this.form));
  cancel = (): void => this.runner.cancel();
  resume = (): Promise<boolean> => this.runner.resume();

  /** Reloads the runs list (and opens `open`, else keeps the open one). */
  refresh = async (open: string | null = this.detail?.run ?? null): Promise<void> => {
    try {
      this.runs = (await this.api.continual.list({})).runs;
      this.adoptions = (await this.api.continual.adoptions({})).adoptions;
      if (open && this.runs.some((r) => r.run === open)) this.detail = await this.api.continual.get({ run: open });
      else if (open === null) this.detail = null;
      this.workspaceError = null;
    } catch (err) {
      this.workspaceError = toUiError(err);
    }
  };

  select = async (run: string): Promise<void> => {
    this.adopted = null;
    this.adoptError = null;
    await this.refresh(run);
  };

  /** Resumes a listed run (interrupted, cancelled or failed) through the runner, with its progress. */
  resumeRun = async (run: string): Promise<boolean> => this.runner.resumeRun(run);

  adopt = async (what: 'lesson' | 'global', episode: number | null, name?: string): Promise<boolean> => {
    if (!this.detail) return false;
    this.adopted = null;
    this.adoptError = null;
    try {
      this.adopted = await this.api.continual.adopt({
        run: this.detail.run,
        what,
        ...(episode !== null && { episode }),
        ...(name && { name }),
      });
      await this.refresh();
      return true;
    } catch (err) {
      this.adoptError = { episode, error: toUiError(err) };
      return false;
    }
  };

  deleteRun = async (run: string): Promise<void> => {
    try {
      await this.api.continual.delete({ run });
      await this.refresh(this.detail?.run === run ? null : undefined);
    } catch (err) {
      this.workspaceError = toUiError(err);
    }
  };
}
