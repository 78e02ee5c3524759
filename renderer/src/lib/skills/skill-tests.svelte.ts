// The Skill page's Tests tab state: the editor (skill-tests-editor.ts) and Verify (verify-run.ts)
// over the studio API, their snapshots made reactive, plus the Verify form's choices.
import type { StudioApi } from '../../../../common/api/contract';
import type { VerifyMode } from '../../../../common/api/verify-schemas';
import { studio } from '../shared/bridge';
import { SkillTestsEditor, type TestsSnapshot } from './skill-tests-editor';
import type { TestRow } from './skill-tests';
import { VerifyRun, type VerifySnapshot } from './verify-run';

export class SkillTestsTab {
  tests = $state.raw<TestsSnapshot>(null as unknown as TestsSnapshot);
  verify = $state.raw<VerifySnapshot>(null as unknown as VerifySnapshot);
  mode = $state<VerifyMode>('instant');
  /** mode adapter: the chosen adapter id ('' = none yet) */
  adapter = $state('');
  /** The last pass rate per mode in this tab: a rate is shown beside the in-context one, what good looks like. */
  rates = $state.raw<Partial<Record<VerifyMode, number>>>({});

  private readonly editor: SkillTestsEditor;
  private readonly run: VerifyRun;

  constructor(api: Pick<StudioApi, 'verify'> & Partial<Pick<StudioApi, 'engine'>> = studio) {
    this.editor = new SkillTestsEditor(api, (s) => (this.tests = s));
    this.run = new VerifyRun(api, (s) => {
      this.verify = s;
      if (s.status === 'done' && s.result) this.rates = { ...this.rates, [s.result.mode]: s.result.passRate };
    });
    this.tests = this.editor.snapshot;
    this.verify = this.run.snapshot;
  }

  /** Saving is worth it: edits, or tests inherited from an earlier version. */
  get canSave(): boolean {
    const t = this.tests;
    if (!t.skill || t.busy || t.problems.length) return false;
    return t.dirty || (t.from !== null && t.from !== t.skill.version);
  }

  /** Why Verify cannot run now, in words (null: it can). */
  get verifyBlocked(): string | null {
    const t = this.tests;
    if (!t.skill || t.busy === 'load') return 'loading the tests';
    if (t.dirty) return 'save the tests first: Verify runs the stored tests';
    if (t.rows.length === 0) return 'add a test first';
    if (this.mode === 'adapter' && !this.adapter) return 'pick an adapter';
    return null;
  }

  load = (name: string, version: number): Promise<boolean> => this.editor.load(name, version);
  add = (): TestRow => this.editor.add();
  update = (key: number, patch: Partial<Omit<TestRow, 'key' | 'fixed'>>): void => this.editor.update(key, patch);
  remove = (key: number): void => this.editor.remove(key);
  revert = (): Promise<boolean> => this.editor.revert();
  save = (): Promise<boolean> => this.editor.save();

  startVerify(): Promise<void> {
    const skill = this.tests.skill;
    if (!skill || this.verifyBlocked) return Promise.resolve();
    return this.run.start(skill, this.mode, this.mode === 'adapter' ? this.adapter : null);
  }

  cancelVerify = (): void => this.run.cancel();

  /** Leaving the tab: a run nobody watches is stopped. */
  dispose(): void {
    this.run.cancel();
  }
}
