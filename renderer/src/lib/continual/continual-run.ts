// The Continual page: one continual.run (SkillWorld episodes; each episode's lesson compiled and
// absorbed by the mode, then every lesson so far measured) with progress per episode, Cancel (a
// stopped run is stored: Resume goes on with it), the pass rate after each episode and the global-adapter versions the run wrote. Plain TypeScript with
// the API passed in, so tests drive it over the in-memory transport; continual-run.svelte.ts makes
// its snapshots reactive.
import {
  ContinualRunInput,
  type ContinualEvent,
  type ContinualMode,
  type ContinualRunResult,
} from '../../../../common/api/continual-schemas';
import type { StreamHandle } from '../../../../common/api/define';
import type { StudioApi } from '../../../../common/api/contract';
import { toUiError, type UiError } from '../shared/errors';
import { labelledIssue } from '../shared/field-words';

export type ContinualStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export const MODE_LABELS: Record<ContinualMode, string> = {
  merge: 'merge: each lesson blended into one global adapter',
  cat: 'cat: the lessons averaged exactly',
  linear: 'linear: the lessons averaged factor by factor (a baseline)',
  independent: 'independent: the newest lesson only',
  in_context: 'in context: the lessons as text',
};

/** The form as the page holds it: optional numbers may be empty (null: the service's default). */
export interface ContinualForm {
  episodes: number | null;
  seed: number | null;
  mode: ContinualMode;
  beta: number | null;
  rankBudget: number | null;
  demos: number | null;
  tasks: number | null;
  maxTokens: number | null;
  /** How lessons are compiled: distilled (default) or instant. */
  tier: 'distilled' | 'instant';
}

export const DEFAULT_FORM: ContinualForm = {
  episodes: 4,
  seed: 0,
  mode: 'merge',
  beta: null,
  rankBudget: null,
  demos: null,
  tasks: null,
  maxTokens: null,
  tier: 'distilled',
};

export const TIER_LABELS: Record<ContinualForm['tier'], string> = {
  distilled: 'distilled: trained on the episode’s tasks (slower, answers)',
  instant: 'instant: the hypernetwork, one pass (fast)',
};

const FIELD_LABELS: Record<string, string> = {
  episodes: 'Episodes',
  seed: 'Seed',
  mode: 'Mode',
  beta: 'Blend weight of each lesson',
  rankBudget: 'Size of the merged adapter',
  demos: 'Demos per episode',
  tasks: 'Tasks per lesson',
  maxTokens: 'Tokens per answer',
  tier: 'Lessons compiled',
};

/** The request the form makes, checked with the contract's schema; or its problems, by field. */
export function continualInput(form: ContinualForm): { input: ContinualRunInput } | { problems: string[] } {
  if (form.episodes === null || form.episodes === undefined) return { problems: ['Episodes: required'] };
  const optional = Object.fromEntries(
    (['seed', 'beta', 'rankBudget', 'demos', 'tasks', 'maxTokens'] as const)
      .filter((k) => form[k] !== null && form[k] !== undefined && !Number.isNaN(form[k]))
      .map((k) => [k, form[k]]),
  );
  const parsed = ContinualRunInput.safeParse({
    suite: 'skillworld',
    episodes: form.episodes,
    mode: form.mode,
    tier: form.tier,
    ...optional,
  });
  if (parsed.success) return { input: parsed.data };
  return {
    problems: parsed.error.issues.map((i) => {
      const field = String(i.path[0] ?? '');
      return labelledIssue(FIELD_LABELS[field] ?? field, i.message);
    }),
  };
}

export interface EpisodePoint {
  episode: number;
  passRate: number;
  globalVersion: number | null;
}

export interface ContinualSnapshot {
  status: ContinualStatus;
  /** The stored run (from its first event): a cancelled or failed one can be resumed. */
  run: string | null;
  /** The form's problems (nothing was sent while there are any). */
  problems: string[];
  /** The episode under way and what it is doing. */
  progress: { episode: number; episodes: number; phase: 'lesson' | 'measure'; world: string } | null;
  /** The pass rate measured after each episode, as they arrive. */
  points: EpisodePoint[];
  /** Each episode's lesson (a skill version) and its adapter. */
  lessons: Array<{ episode: number; skill: { name: string; version: number }; adapter: string }>;
  warnings: string[];
  result: ContinualRunResult | null;
  error: UiError | null;
  cancelling: boolean;
}

/** The global-adapter versions the run wrote (merge, cat, linear), in episode order. */
export function globalVersions(points: readonly EpisodePoint[]): Array<{ episode: number; version: number }> {
  const seen = new Set<number>();
  const out: Array<{ episode: number; version: number }> = [];
  for (const p of points) {
    if (p.globalVersion === null || seen.has(p.globalVersion)) continue;
    seen.add(p.globalVersion);
    out.push({ episode: p.episode, version: p.globalVersion });
  }
  return out;
}

/** No run yet; a new run starts from it. */
const IDLE: ContinualSnapshot = {
  status: 'idle',
  run: null,
  problems: [],
  progress: null,
  points: [],
  lessons: [],
  warnings: [],
  result: null,
  error: null,
  cancelling: false,
};

export class ContinualRunner {
  private s: ContinualSnapshot = IDLE;
  private handle: StreamHandle<ContinualRunResult> | null = null;

  constructor(
    private readonly api: Pick<StudioApi, 'continual'>,
    private readonly onChange: (s: ContinualSnapshot) => void,
    /** A run ended having written lessons and adapters (the adapter list follows). */
    private readonly onEnded: () => void = () => {},
  ) {}

  get snapshot(): ContinualSnapshot {
    return this.s;
  }

  /** Checks the form and runs it; resolves when the run ends. false: the form had problems. */
  async start(form: ContinualForm): Promise<boolean> {
    if (this.s.status === 'running') return false;
    const checked = continualInput(form);
    if ('problems' in checked) {
      this.set({ problems: checked.problems });
      return false;
    }
    this.set({ ...IDLE, status: 'running' });
    await this.drive(this.api.continual.run(checked.input, (e) => this.onEvent(e)));
    return true;
  }

  /** Goes on with the cancelled or failed run shown: its measured episodes are kept as stored. */
  async resume(): Promise<boolean> {
    const run = this.s.run;
    if (!run || this.s.status === 'done') return false;
    return this.resumeRun(run);
  }

  /** Goes on with a listed run (killed, cancelled or failed), shown here as it goes. */
  async resumeRun(run: string): Promise<boolean> {
    if (this.s.status === 'running') return false;
    if (run !== this.s.run) this.set({ run, points: [], lessons: [], warnings: [], result: null });
    this.set({ status: 'running', progress: null, error: null, cancelling: false });
    await this.drive(this.api.continual.resume({ run }, (e) => this.onEvent(e)));
    return true;
  }

  cancel(): void {
    if (!this.handle) return;
    this.set({ cancelling: true });
    this.handle.cancel();
  }

  private async drive(handle: StreamHandle<ContinualRunResult>): Promise<void> {
    this.handle = handle;
    try {
      const result = await handle.result;
      // The stored episodes are the record (a resumed run's first ones were measured before).
      const points = result.episodes.map((e) => ({
        episode: e.episode,
        passRate: e.passRate,
        globalVersion: e.globalVersion,
      }));
      this.set({ status: 'done', result, points, cancelling: false });
    } catch (err) {
      const error = toUiError(err);
      this.set({ status: error.code === 'cancelled' ? 'cancelled' : 'failed', error, cancelling: false });
    } finally {
      this.handle = null;
      this.onEnded();
    }
  }

  private onEvent(e: ContinualEvent): void {
    switch (e.type) {
      case 'run':
        this.set({ run: e.run });
        break;
      case 'episode':
        this.set({ progress: { episode: e.episode, episodes: e.episodes, phase: 'lesson', world: e.world } });
        break;
      case 'lesson':
        this.set({ lessons: [...this.s.lessons, { episode: e.episode, skill: e.skill, adapter: e.adapter }] });
        break;
      case 'measure':
        if (this.s.progress) this.set({ progress: { ...this.s.progress, phase: 'measure' } });
        break;
      case 'measured':
        this.set({
          points: [
            ...this.s.points.filter((p) => p.episode !== e.episode),
            { episode: e.episode, passRate: e.passRate, globalVersion: e.globalVersion },
          ],
        });
        break;
      case 'warning':
        this.set({ warnings: [...this.s.warnings, `Episode ${e.episode}: ${e.message}`] });
        break;
      default:
        break; // events this page does not show
    }
  }

  private set(patch: Partial<ContinualSnapshot>): void {
    this.s = { ...this.s, ...patch };
    this.onChange(this.s);
  }
}
