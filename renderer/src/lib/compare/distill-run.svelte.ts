// Distilling one skill version on the skill page (adapters.distillPlan, adapters.distill): the plan
// (whether the bundle can, the practice questions with their sources, seconds per step measured here),
// the user's edits to the question list, then one run with its live losses, Cancel and the result.
import type {
  AdapterSummary,
  DistillPlan,
  DistillProgressEvent,
  DistillResultSchema,
  PracticeQuestionInput,
  SkillRef,
} from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';
import { StreamRun } from '../shared/stream-run.svelte';

export type CompileMode = 'instant' | 'distilled';

export const MAX_STEPS = 2000;

export class DistillRun extends StreamRun<DistillProgressEvent, DistillResultSchema> {
  mode = $state<CompileMode>('instant');
  plan = $state.raw<DistillPlan | null>(null);
  planError = $state.raw<UiError | null>(null);
  loadingPlan = $state(false);
  /** The questions the next run practises on: the plan's, after the user's adds and removes. */
  questions = $state.raw<PracticeQuestionInput[]>([]);
  steps = $state(40);
  losses = $state.raw<number[]>([]);

  private planFor = '';

  /** onDistilled: a distilled adapter was stored (the library and compare's columns follow). */
  constructor(private readonly onDistilled: (result: DistillResultSchema) => void = () => {}) {
    super();
  }

  /** Steps × measured seconds per step; null until measured. The teacher pass comes on top. */
  get estimateSeconds(): number | null {
    const e = this.plan?.estimate;
    return e && Number.isFinite(this.steps) && this.steps > 0 ? this.steps * e.secondsPerStep : null;
  }

  get canStart(): boolean {
    return (
      !this.running &&
      this.plan?.available === true &&
      this.questions.length > 0 &&
      Number.isInteger(this.steps) &&
      this.steps >= 1 &&
      this.steps <= MAX_STEPS
    );
  }

  /** The stored distilled adapter of this version on this bundle when its recipe is the one the next run
   *  would follow (the same steps and the same number of practice questions): using it gives the same
   *  adapter a new run would train, so *Run the example* and Compare reuse it. */
  get reusable(): AdapterSummary | null {
    const a = this.plan?.distilled ?? null;
    if (!a || a.recipe.kind !== 'distill') return null;
    // Self-written requests and tool follow-ups are made at run time, so they are not in the list.
    const atRun = ['self_written', 'round_trip'];
    const questions = Object.entries(a.recipe.questions).reduce((n, [s, k]) => n + (atRun.includes(s) ? 0 : k), 0);
    return a.recipe.steps === this.steps && questions === this.questions.length ? a : null;
  }

  /** The plan of this version on this bundle (null: whichever loads); asked again for the same, it is
   *  kept unless `reload` (a run may have stored an adapter since). */
  async load(ref: { name: string; version: number }, bundleId: string | null, reload = false): Promise<void> {
    const key = `${ref.name}@${ref.version}`;
    const same = this.planFor === key && (bundleId === null || this.plan?.bundle.id === bundleId);
    if (same && !reload && (this.plan || this.loadingPlan)) return;
    this.planFor = key;
    this.loadingPlan = true;
    this.planError = null;
    try {
      const plan = await studio.adapters.distillPlan(ref);
      if (this.planFor !== key) return;
      const fresh = this.plan?.skill.name !== plan.skill.name || this.plan?.skill.version !== plan.skill.version;
      this.plan = plan;
      if (fresh) {
        this.questions = plan.questions.map((q) => ({ ...q }));
        this.steps = plan.defaultSteps;
      }
      if (!plan.available) this.mode = 'instant';
    } catch (err) {
      if (this.planFor === key) this.planError = toUiError(err);
    } finally {
      if (this.planFor === key) this.loadingPlan = false;
    }
  }

  /** Adds a question of the user's; false when empty or already listed. */
  add(text: string): boolean {
    const question = text.trim();
    if (!question || this.questions.some((q) => q.question === question)) return false;
    this.questions = [...this.questions, { question, source: 'user' }];
    return true;
  }

  remove(index: number): void {
    this.questions = this.questions.filter((_, i) => i !== index);
  }

  /** Back to the version's own questions. */
  resetQuestions(): void {
    this.questions = (this.plan?.questions ?? []).map((q) => ({ ...q }));
  }

  async start(ref: SkillRef): Promise<void> {
    if (!this.canStart) return;
    this.losses = [];
    // The panel promises self-written requests on top of the list whenever there is a writer (as the CLI).
    const selfWritten = this.plan?.practice.writer != null;
    const input = { skill: ref, steps: this.steps, questions: this.questions, selfWritten };
    const result = await this.follow((onEvent) => studio.adapters.distill(input, onEvent));
    if (result) {
      if (this.plan) this.plan = { ...this.plan, distilled: result.adapter };
      this.onDistilled(result);
    }
  }

  protected override onProgress(event: DistillProgressEvent): void {
    if (event.phase === 'train' && event.loss !== null) this.losses = [...this.losses, event.loss];
  }
}
