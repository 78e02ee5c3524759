// The Tests tab's editor: load a version's tests (verify.tests), add / edit / delete rows, and save
// them with that version (verify.setTests). Plain TypeScript with the API passed in, so tests drive
// it over the in-memory transport; skill-tests.svelte.ts makes its snapshots reactive.
import type { StudioApi } from '../../../../common/api/contract';
import type { VerifierTest } from '../../../../common/api/verify-schemas';
import { checkExpect } from '../../../../common/verify/expect';
import { toUiError, type UiError } from '../shared/errors';
import {
  blankRow,
  rowFromTest,
  rowsSignature,
  testFromRow,
  validateRows,
  type RowProblem,
  type TestRow,
} from './skill-tests';

export interface TestsSnapshot {
  skill: { name: string; version: number } | null;
  /** The version the loaded tests are stored with (this one or an earlier one); null: none has tests. */
  from: number | null;
  rows: TestRow[];
  /** Rows differ from what was loaded or saved. */
  dirty: boolean;
  problems: RowProblem[];
  busy: 'load' | 'check' | 'save' | null;
  error: UiError | null;
  notice: string | null;
  /** New or changed tests whose checker passes the No skill answer (the base model without the skill):
   *  they cannot show the skill works. Save stops once to show them; Save again stores them anyway. */
  noSkillPasses: NoSkillPass[];
}

export interface NoSkillPass {
  row: number;
  id: string;
  answer: string;
}

/** At most this many new or changed tests are answered without the skill before a save. */
const NO_SKILL_CHECKS = 8;

export class SkillTestsEditor {
  private s: TestsSnapshot = {
    skill: null,
    from: null,
    rows: [],
    dirty: false,
    problems: [],
    busy: null,
    error: null,
    notice: null,
    noSkillPasses: [],
  };
  private baseline = rowsSignature([]);
  /** The tests as loaded or saved, by id: the No skill check looks only at new or changed ones. */
  private stored = new Map<string, string>();
  /** The rows whose No skill passes were shown: saving those same rows again stores them. */
  private warned: string | null = null;
  /** Rows added and not yet typed in: their (certain) problems wait for an edit or a Save. */
  private readonly fresh = new Set<number>();
  private nextKey = 1;
  private seq = 0;

  constructor(
    private readonly api: Pick<StudioApi, 'verify'> & Partial<Pick<StudioApi, 'engine'>>,
    private readonly onChange: (s: TestsSnapshot) => void,
  ) {}

  get snapshot(): TestsSnapshot {
    return this.s;
  }

  async load(name: string, version: number): Promise<boolean> {
    const seq = ++this.seq;
    this.set({ busy: 'load', error: null, notice: null });
    try {
      const r = await this.api.verify.tests({ name, version });
      if (seq !== this.seq) return false;
      this.reset(
        r.skill,
        r.from,
        r.tests.map((t) => rowFromTest(t, this.nextKey++)),
      );
      return true;
    } catch (err) {
      if (seq === this.seq) this.set({ busy: null, error: toUiError(err) });
      return false;
    }
  }

  add(): TestRow {
    const row = blankRow(this.nextKey++, this.s.rows);
    this.fresh.add(row.key);
    this.edit([...this.s.rows, row]);
    return row;
  }

  update(key: number, patch: Partial<Omit<TestRow, 'key' | 'fixed'>>): void {
    this.fresh.delete(key);
    this.edit(this.s.rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  }

  remove(key: number): void {
    this.fresh.delete(key);
    this.edit(this.s.rows.filter((r) => r.key !== key));
  }

  /** Back to the tests as last loaded or saved. */
  async revert(): Promise<boolean> {
    const skill = this.s.skill;
    return skill ? this.load(skill.name, skill.version) : false;
  }

  /** Stores the rows as this version's tests; refused (nothing sent) while a row has a problem. */
  async save(): Promise<boolean> {
    const skill = this.s.skill;
    if (!skill || this.s.busy) return false;
    this.fresh.clear(); // Save shows every problem, typed in or not
    const { tests, problems } = validateRows(this.s.rows);
    if (!tests) {
      this.set({ problems });
      return false;
    }
    const seq = ++this.seq;
    const signature = rowsSignature(this.s.rows);
    if (this.warned !== signature) {
      this.set({ busy: 'check', error: null, notice: null });
      const passes = await this.noSkillPasses(tests);
      if (seq !== this.seq) return false;
      if (passes.length > 0) {
        this.warned = signature;
        this.set({ busy: null, noSkillPasses: passes });
        return false;
      }
    }
    this.set({ busy: 'save', error: null, notice: null });
    try {
      const r = await this.api.verify.setTests({ ...skill, tests });
      if (seq !== this.seq) return false;
      this.reset(
        r.skill,
        r.from,
        r.tests.map((t) => rowFromTest(t, this.nextKey++)),
      );
      this.set({
        notice: `Saved ${r.tests.length} ${r.tests.length === 1 ? 'test' : 'tests'} with v${r.skill.version}.`,
      });
      return true;
    } catch (err) {
      if (seq === this.seq) this.set({ busy: null, error: toUiError(err) });
      return false;
    }
  }

  /** The new or changed tests with a prompt whose checker the base model's greedy answer (no skill)
   *  passes. Without the engine, or when it cannot answer, nothing is flagged: the save goes on. */
  private async noSkillPasses(tests: VerifierTest[]): Promise<NoSkillPass[]> {
    const engine = this.api.engine;
    if (!engine) return [];
    const changed = tests
      .map((t, row) => ({ t, row }))
      .filter(({ t }) => t.prompt !== undefined && this.stored.get(t.id) !== JSON.stringify(t))
      .slice(0, NO_SKILL_CHECKS);
    const passes: NoSkillPass[] = [];
    for (const { t, row } of changed) {
      try {
        const handle = engine.generate(
          {
            messages: [{ role: 'user', content: t.prompt! }],
            maxTokens: t.maxTokens ?? 64,
            sampling: { temperature: 0 },
          },
          () => {},
        );
        const { text } = await handle.result;
        if (checkExpect(t.expect, text).passed) passes.push({ row, id: t.id, answer: text });
      } catch {
        return passes;
      }
    }
    return passes;
  }

  private reset(skill: TestsSnapshot['skill'], from: number | null, rows: TestRow[]): void {
    this.baseline = rowsSignature(rows);
    this.stored = new Map(
      rows.flatMap((r) => {
        const made = testFromRow(r);
        return 'test' in made ? [[made.test.id, JSON.stringify(made.test)] as const] : [];
      }),
    );
    this.warned = null;
    this.fresh.clear();
    this.set({ skill, from, rows, dirty: false, problems: [], busy: null, error: null, noSkillPasses: [] });
  }

  private edit(rows: TestRow[]): void {
    this.set({
      rows,
      dirty: rowsSignature(rows) !== this.baseline,
      problems: validateRows(rows).problems.filter((p) => !this.fresh.has(rows[p.row]?.key ?? -1)),
      notice: null,
      noSkillPasses: [],
    });
  }

  private set(patch: Partial<TestsSnapshot>): void {
    this.s = { ...this.s, ...patch };
    this.onChange(this.s);
  }
}
