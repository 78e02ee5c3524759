// One side-by-side comparison (compare.run): the same prompt answered without the skill, with it in
// the context, with its instant adapter, with its distilled adapter (once it has one), and with another
// skill's adapter, all in one batch. Each column fills with its streamed tokens, then takes its final
// text and numbers from the result.
import type { StreamHandle } from '../../../../common/api/define';
import {
  COMPARE_CONDITIONS,
  type CompareColumn,
  type CompareColumnSetup,
  type CompareCondition,
  type CompareEvent,
  type CompareRunInput,
  type CompareRunResult,
} from '../../../../common/api/engine-schemas';
import type { SkillSummary } from '../../../../common/api/skill-schemas';
import { pickWrongSkill } from '../../../../common/compare/wrong-skill';
import { describeExpect } from '../../../../common/verify/describe';
import { checkExpect, type Expect } from '../../../../common/verify/expect';
import { studio } from '../shared/bridge';
import { toUiError, type UiError } from '../shared/errors';

export type CompareStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export const CONDITIONS: readonly CompareCondition[] = COMPARE_CONDITIONS;

/** The columns shown: the distilled one only once the version has a distilled adapter; the instant
 *  and wrong-skill ones only where the bundle has a hypernetwork to compile them. */
export function shownConditions(hasDistilled: boolean, hasInstant = true): CompareCondition[] {
  return CONDITIONS.filter(
    (c) => (c !== 'distilled' || hasDistilled) && (hasInstant || (c !== 'instant' && c !== 'wrong_skill')),
  );
}

/** Each column's title and the line under it that says where the skill is (docs/guide.md). */
export const CONDITION_LABELS: Record<CompareCondition, { title: string; hint: string }> = {
  none: { title: 'No skill', hint: 'the base model alone' },
  in_context: { title: 'In context', hint: 'skill in the prompt' },
  instant: { title: 'Instant', hint: 'skill in the weights, one pass' },
  distilled: { title: 'Distilled', hint: 'skill in the weights, distilled' },
  wrong_skill: { title: 'Wrong skill', hint: "another skill's adapter" },
};

/** A prompt whose answers a checker can mark: a test of the skill, or an example's held-out task. */
export interface CompareCheck {
  prompt: string;
  expect: Expect;
  /** Where the check comes from, for the tooltip ("test p3", "held-out task"). */
  source: string;
}

/** ✓/✗ of one answer, with a rule a person reads (never the spec's JSON). */
export interface ColumnVerdict {
  passed: boolean;
  rule: string;
  reason: string | null;
  /** Distilled on a skill's test: whether the adapter practised on it (its ✓ then says little) or it
   *  was held out to judge the adapter; null otherwise (docs/distill.md "Practice"). */
  practice: 'practised' | 'held out' | null;
}

export function verdictOf(check: CompareCheck, answer: string): ColumnVerdict {
  const outcome = checkExpect(check.expect, answer);
  return { passed: outcome.passed, rule: describeExpect(check.expect), reason: outcome.reason, practice: null };
}

/** One column: what the stream has said about its condition so far. */
export class CompareColumnState {
  readonly condition: CompareCondition;
  setup = $state.raw<CompareColumnSetup | null>(null);
  text = $state('');
  tokens = $state(0);
  final = $state.raw<CompareColumn | null>(null);
  /** Why the run left this condition out (compare.run's `skipped`). */
  skipped = $state<string | null>(null);

  constructor(condition: CompareCondition) {
    this.condition = condition;
  }
}

export interface CompileStep {
  skill: { name: string; version: number };
  chunk: number;
  chunks: number;
}

export class CompareRun {
  prompt = $state('');
  maxTokens = $state<number | null>(48);
  status = $state<CompareStatus>('idle');
  columns = $state.raw<CompareColumnState[]>(shownConditions(false).map((c) => new CompareColumnState(c)));
  /** The id of the version's newest distilled adapter, null when it has none (no Distilled column). */
  distilled = $state<string | null>(null);
  /** The test ids the distilled adapter practised on and held out, by adapter id (its recipe). */
  private practiceOf = $state.raw<{ id: string; practised: string[]; heldOut: string[] } | null>(null);
  /** Whether the bundle has a hypernetwork (Instant and Wrong skill columns); set by the skill page. */
  instant = $state(true);
  /** Set while the run compiles an adapter it needs before generating. */
  compiling = $state.raw<CompileStep | null>(null);
  result = $state.raw<CompareRunResult | null>(null);
  error = $state.raw<UiError | null>(null);
  stopping = $state(false);
  /** The wrong_skill column's skill: '' lets compare.run pick (the same rule as `autoWrongSkill`). */
  wrongSkill = $state('');
  /** The library, for the wrong-skill picker. */
  library = $state.raw<SkillSummary[]>([]);
  /** Prompts a checker can mark (the skill's tests, an example's tasks); the run's prompt picks one. */
  checks = $state.raw<CompareCheck[]>([]);
  /** The check of the last run's prompt, fixed when it starts (editing the prompt keeps the marks). */
  ranCheck = $state.raw<CompareCheck | null>(null);
  /** Counts the runs that ended with every answer: the panel brings the columns into view on a new one. */
  finished = $state(0);

  private handle: StreamHandle<CompareRunResult> | null = null;

  /** onFinished: after every run (it may have compiled adapters for the instant columns). */
  constructor(private readonly onFinished: () => void = () => {}) {}

  get running(): boolean {
    return this.status === 'running';
  }

  get canRun(): boolean {
    return !this.running && this.prompt.trim() !== '';
  }

  async loadLibrary(): Promise<void> {
    try {
      this.library = await studio.skills.list({});
    } catch {
      this.library = []; // the picker then offers only the automatic choice
    }
  }

  /** What compare.run picks for `name` when no wrong skill is chosen (common/compare/wrong-skill.ts). */
  autoWrongSkill(name: string): string | null {
    const self = this.library.find((s) => s.name === name) ?? { name, description: '', package: null };
    return pickWrongSkill(self, this.library);
  }

  async start(skill: { name: string; version?: number }): Promise<void> {
    const prompt = this.prompt.trim();
    if (!prompt || this.running) return;
    this.status = 'running';
    this.ranCheck = this.checkFor(prompt);
    this.columns = shownConditions(this.distilled !== null, this.instant).map((c) => new CompareColumnState(c));
    this.compiling = null;
    this.result = null;
    this.error = null;
    this.stopping = false;
    const input: CompareRunInput = {
      ...skill,
      prompt,
      ...(this.maxTokens !== null && Number.isFinite(this.maxTokens) ? { maxTokens: this.maxTokens } : {}),
      ...(this.wrongSkill && this.wrongSkill !== skill.name ? { wrongSkill: this.wrongSkill } : {}),
      // The checker goes along, so each column's kept trajectory has the verdict this page shows.
      ...(this.ranCheck
        ? {
            check: {
              expect: this.ranCheck.expect,
              ...(this.ranCheck.source.startsWith('test ') && { test: this.ranCheck.source.slice(5) }),
            },
          }
        : {}),
    };
    const handle = studio.compare.run(input, (event) => this.onEvent(event));
    this.handle = handle;
    try {
      const result = await handle.result;
      this.finish(result);
      this.status = result.columns.some((c) => c.finishReason === 'cancelled') ? 'cancelled' : 'done';
      if (this.status === 'done') this.finished += 1;
    } catch (err) {
      const error = toUiError(err);
      this.error = error;
      this.status = error.code === 'cancelled' ? 'cancelled' : 'failed';
    } finally {
      this.handle = null;
      this.stopping = false;
      this.compiling = null;
      this.onFinished();
    }
  }

  /** The check whose prompt is `prompt` (surrounding space ignored), if any. */
  checkFor(prompt: string): CompareCheck | null {
    const p = prompt.trim();
    return this.checks.find((c) => c.prompt.trim() === p) ?? null;
  }

  /** Adds checks (an example's held-out tasks) ahead of the ones known; the same prompt once. */
  addChecks(checks: CompareCheck[]): void {
    const fresh = checks.filter((c) => !this.checks.some((k) => k.prompt.trim() === c.prompt.trim()));
    this.checks = [...fresh, ...this.checks];
  }

  /** The skill's tests with one user message become checks (their prompt may be compared as is). */
  async loadChecks(skill: { name: string; version: number }): Promise<void> {
    try {
      const set = await studio.verify.tests(skill);
      this.addChecks(
        set.tests
          .filter((t) => t.prompt !== undefined)
          .map((t) => ({ prompt: t.prompt!, expect: t.expect, source: `test ${t.id}` })),
      );
    } catch {
      // Without tests the columns simply carry no ✓/✗.
    }
  }

  /** The mark of one column of the last run, once its answer is final. */
  verdict(column: CompareColumnState): ColumnVerdict | null {
    if (!this.ranCheck || !column.final) return null;
    const verdict = verdictOf(this.ranCheck, column.final.text);
    const test = this.ranCheck.source.startsWith('test ') ? this.ranCheck.source.slice(5) : null;
    const p = this.practiceOf;
    if (column.condition !== 'distilled' || test === null || !p || p.id !== column.setup?.adapter) return verdict;
    const practice = p.practised.includes(test) ? 'practised' : p.heldOut.includes(test) ? 'held out' : null;
    return { ...verdict, practice };
  }

  /** What a screen reader hears when a run ends: each column's verdict, or that the answers are in. */
  announcement(): string {
    if (this.status !== 'done') return '';
    const marks = this.columns
      .map((c) => {
        const v = this.verdict(c);
        return v ? `${CONDITION_LABELS[c.condition].title} ${v.passed ? 'passes' : 'fails'}` : null;
      })
      .filter((m): m is string => m !== null);
    return marks.length > 0
      ? `Compare finished. ${marks.join(', ')}.`
      : `Compare finished: ${this.columns.length} answers, no checker for this prompt.`;
  }

  stop(): void {
    if (!this.handle) return;
    this.stopping = true;
    this.handle.cancel();
  }

  /** Shows or hides the Distilled column between runs (the skill page learns of a distilled adapter). */
  setDistilled(id: string | null, practice?: { practisedTests: string[]; heldOutTests: string[] } | null): void {
    this.distilled = id;
    if (practice !== undefined)
      this.practiceOf =
        id && practice ? { id, practised: practice.practisedTests, heldOut: practice.heldOutTests } : null;
    this.reshape();
  }

  /** Shows or hides the Instant and Wrong skill columns between runs (the bundle has a hypernetwork or not). */
  setInstant(on: boolean): void {
    this.instant = on;
    this.reshape();
  }

  private reshape(): void {
    if (this.running) return;
    const shown = shownConditions(this.distilled !== null, this.instant);
    if (shown.join() !== this.columns.map((c) => c.condition).join())
      this.columns = shown.map((c) => this.column(c) ?? new CompareColumnState(c));
  }

  private column(condition: CompareCondition): CompareColumnState | undefined {
    return this.columns.find((c) => c.condition === condition);
  }

  private onEvent(event: CompareEvent): void {
    if (event.type === 'compile') {
      this.compiling = { skill: event.skill, chunk: event.chunk, chunks: event.chunks };
    } else if (event.type === 'start') {
      this.compiling = null;
      // The API decides whether a distilled column runs: follow it.
      const shown = shownConditions(
        event.columns.some((c) => c.condition === 'distilled'),
        event.columns.some((c) => c.condition === 'instant' || c.condition === 'wrong_skill'),
      );
      if (shown.join() !== this.columns.map((c) => c.condition).join()) {
        this.columns = shown.map((c) => this.column(c) ?? new CompareColumnState(c));
        this.distilled = event.columns.find((c) => c.condition === 'distilled')?.adapter ?? null;
      }
      for (const setup of event.columns) {
        const col = this.column(setup.condition);
        if (col) col.setup = setup;
      }
    } else {
      const col = this.column(event.condition);
      if (col) {
        col.text += event.text;
        col.tokens += 1;
      }
    }
  }

  private finish(result: CompareRunResult): void {
    this.result = result;
    for (const final of result.columns) {
      const col = this.column(final.condition);
      if (!col) continue;
      col.final = final;
      col.setup = final;
      col.text = final.text;
      col.tokens = final.completionTokens;
    }
    for (const s of result.skipped) {
      const col = this.column(s.condition);
      if (col) col.skipped = s.reason;
    }
  }
}
