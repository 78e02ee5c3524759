// The Evolve tab of one skill: its runs, the one shown (candidates, diffs, scores), and a run in
// progress (evolve.run / evolve.resume: progress per scored candidate, Cancel). Accept makes a
// candidate the skill's next version; Reject marks it.
import type { EvolveEvent, EvolveRunDetail, EvolveRunSummary } from '../../../../common/api/evolve-schemas';
import type { StreamHandle } from '../../../../common/api/define';
import type { EvolveResult } from '../../../../common/api/evolve-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';
import type { ScorePoint } from './evolve-chart';

export type EvolveStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export interface EvolveForm {
  iterations: number;
  candidates: number;
  generator: 'offline' | 'llm';
}

export class EvolveSession {
  runs = $state.raw<EvolveRunSummary[]>([]);
  detail = $state.raw<EvolveRunDetail | null>(null);
  status = $state<EvolveStatus>('idle');
  error = $state.raw<UiError | null>(null);
  cancelling = $state(false);
  /** Scores as they arrive during a run (the chart draws them before the run's detail is loaded). */
  live = $state.raw<ScorePoint[]>([]);
  /** `iteration`: iterations finished. */
  progress = $state.raw<{ iteration: number; iterations: number; scored: number } | null>(null);
  selected = $state<number | null>(null);
  busy = $state(false);
  notice = $state<string | null>(null);
  /** How many verifier tests a version has (its own or inherited; evolve scores with them), once read. */
  tests = $state.raw<{ version: number; count: number } | null>(null);

  private handle: StreamHandle<EvolveResult> | null = null;
  private runId: string | null = null;

  constructor(
    readonly name: string,
    private readonly onVersion: () => void,
  ) {}

  get running(): boolean {
    return this.status === 'running';
  }

  /** Points for the chart: the shown run's scored candidates, or the live ones while running. */
  get points(): ScorePoint[] {
    if (this.running || !this.detail) return this.live;
    return this.detail.candidates
      .filter((c) => c.score !== null)
      .map((c) => ({ iteration: c.iteration, score: c.score! }));
  }

  async refresh(): Promise<void> {
    try {
      this.runs = await studio.evolve.list({ name: this.name });
      const first = this.runs[0];
      if (!this.detail && first) await this.open(first.id);
    } catch (err) {
      this.error = toUiError(err);
    }
  }

  /** Reads the version's tests, so the tab can say there are none before a run is refused for it. */
  async loadTests(version: number): Promise<void> {
    try {
      const { tests } = await studio.verify.tests({ name: this.name, version });
      this.tests = { version, count: tests.length };
    } catch (err) {
      this.error = toUiError(err);
    }
  }

  async open(run: string): Promise<void> {
    try {
      this.detail = await studio.evolve.get({ run });
      const best = this.detail.best?.candidate ?? null;
      this.selected =
        this.detail.candidates.find((c) => c.id === best && c.iteration > 0)?.id ??
        this.detail.candidates.find((c) => c.iteration > 0)?.id ??
        null;
    } catch (err) {
      this.error = toUiError(err);
    }
  }

  start(version: number, form: EvolveForm): Promise<void> {
    return this.drive((onEvent) =>
      studio.evolve.run(
        {
          name: this.name,
          version,
          iterations: form.iterations,
          candidates: form.candidates,
          generator: form.generator,
          accept: false,
        },
        onEvent,
      ),
    );
  }

  resume(run: string): Promise<void> {
    return this.drive((onEvent) => studio.evolve.resume({ run }, onEvent));
  }

  cancel(): void {
    if (!this.handle) return;
    this.cancelling = true;
    this.handle.cancel();
  }

  /** A candidate as the table names it (its iteration and its # there), not by its internal id. */
  label(candidate: number): string {
    const c = this.detail?.candidates.find((x) => x.id === candidate);
    return c ? `Iteration ${c.iteration}, candidate #${c.index}` : `Candidate ${candidate}`;
  }

  async accept(candidate: number): Promise<void> {
    const run = this.detail?.id;
    if (!run) return;
    await this.act(async () => {
      const r = await studio.evolve.accept({ run, candidate });
      this.notice = `${this.label(candidate)} is now version ${r.version.version}${r.adapter ? `, compiled (adapter ${r.adapter})` : ''}.`;
      this.onVersion();
    });
  }

  async reject(candidate: number): Promise<void> {
    const run = this.detail?.id;
    if (!run) return;
    await this.act(async () => {
      await studio.evolve.reject({ run, candidate });
      this.notice = `${this.label(candidate)} rejected.`;
    });
  }

  private async act(f: () => Promise<void>): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await f();
      if (this.detail) await this.open(this.detail.id);
    } catch (err) {
      this.error = toUiError(err);
    } finally {
      this.busy = false;
    }
  }

  private async drive(begin: (onEvent: (e: EvolveEvent) => void) => StreamHandle<EvolveResult>): Promise<void> {
    if (this.running) return;
    this.status = 'running';
    this.error = null;
    this.notice = null;
    this.cancelling = false;
    this.live = [];
    this.progress = null;
    this.runId = null;
    const handle = begin((e) => this.onEvent(e));
    this.handle = handle;
    let status: EvolveStatus;
    try {
      const r = await handle.result;
      status = 'done';
      this.runId = r.run.id;
    } catch (err) {
      this.error = toUiError(err);
      status = this.error.code === 'cancelled' ? 'cancelled' : 'failed';
    }
    this.handle = null;
    // The run's rows first, then the status: what the page shows once it says done is that run.
    this.runs = await studio.evolve.list({ name: this.name }).catch(() => this.runs);
    if (this.runId) await this.open(this.runId);
    this.cancelling = false;
    this.status = status;
  }

  private onEvent(e: EvolveEvent): void {
    if (e.type === 'run') {
      this.runId = e.run;
      this.progress = { iteration: 0, iterations: e.iterations, scored: 0 };
    } else if (e.type === 'scored') {
      this.live = [...this.live, { iteration: e.iteration, score: e.score }];
      if (this.progress) this.progress = { ...this.progress, scored: this.progress.scored + 1 };
    } else if (e.type === 'iteration' && this.progress) {
      this.progress = { ...this.progress, iteration: e.iteration };
    }
  }
}
