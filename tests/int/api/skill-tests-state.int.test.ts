// The Tests tab's state over the in-memory transport against the real services, a SQLite file and
// the bundle-hyper fixture (random weights: "always" passes and "never" fails whatever it answers):
// the editor loads, edits, refuses and saves a version's tests (verify.tests / verify.setTests), and
// Verify runs them with no skill, in context, compiled and with a chosen adapter, and cancels.
import { beforeAll, describe, expect, it } from 'vitest';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { SkillTestsEditor, type TestsSnapshot } from '../../../renderer/src/lib/skills/skill-tests-editor';
import { VerifyRun, type VerifySnapshot } from '../../../renderer/src/lib/skills/verify-run';
import { HYPER_BUNDLE, SKILLS } from '../compile/fixture';
import { memory, studioSuite } from './transports';

const NAME = 'sql-review';
const TESTS: VerifierTest[] = [
  {
    id: 'always',
    prompt: 'Is a lock needed?',
    expect: { kind: 'not', of: { kind: 'contains', value: 'zq-never-zq' } },
  },
  { id: 'never', prompt: 'Does it lock?', expect: { kind: 'exact', value: 'no random model says 4711' }, maxTokens: 4 },
];

const suite = studioSuite(memory, 'pskills-tests-tab-', { defaultBundleDir: HYPER_BUNDLE });
beforeAll(async () => {
  await suite.api.skills.save({ name: NAME, content: SKILLS[NAME] });
  await suite.api.verify.setTests({ name: NAME, tests: TESTS });
});

describe('the Tests tab editor', () => {
  it('loads the tests (the SkillWorld checker read-only), edits, refuses a bad row unsent, saves', async () => {
    const snaps: TestsSnapshot[] = [];
    const editor = new SkillTestsEditor(suite.api, (s) => snaps.push(s));
    expect(await editor.load(NAME, 1)).toBe(true);
    let s = editor.snapshot;
    expect(s).toMatchObject({ skill: { name: NAME, version: 1 }, from: 1, dirty: false, problems: [] });
    expect(s.rows.map((r) => [r.id, r.fixed !== null])).toEqual([
      ['always', true],
      ['never', false],
    ]);
    expect(snaps.some((x) => x.busy === 'load')).toBe(true);

    const added = editor.add();
    expect(editor.snapshot.dirty).toBe(true);
    expect(editor.snapshot.problems).toEqual([]); // a blank new row is not an error before anyone types
    editor.update(added.key, { id: 'regex' });
    expect(editor.snapshot.problems.map((p) => p.field)).toEqual(['prompt', 'expect.value']);
    editor.update(added.key, { id: 'regex', prompt: 'Which command lists it?', kind: 'regex', value: 'tar (' });
    expect(await editor.save()).toBe(false);
    expect(editor.snapshot.problems).toEqual([
      { row: 2, id: 'regex', field: 'expect.pattern', message: "unbalanced '('" },
    ]);
    expect((await suite.api.verify.tests({ name: NAME })).tests).toHaveLength(2); // nothing was sent

    editor.update(added.key, { value: 'tar -[a-z]*t', flags: 'i', maxTokens: '6' });
    editor.remove(s.rows[1]!.key);
    expect(await editor.save()).toBe(true);
    s = editor.snapshot;
    expect(s).toMatchObject({ dirty: false, from: 1, notice: 'Saved 2 tests with v1.' });
    expect((await suite.api.verify.tests({ name: NAME })).tests).toEqual([
      TESTS[0],
      {
        id: 'regex',
        prompt: 'Which command lists it?',
        expect: { kind: 'regex', pattern: 'tar -[a-z]*t', flags: 'i' },
        maxTokens: 6,
      },
    ]);

    editor.update(s.rows[1]!.key, { prompt: 'changed' });
    expect(editor.snapshot.dirty).toBe(true);
    expect(await editor.revert()).toBe(true);
    expect(editor.snapshot.dirty).toBe(false);
    expect(editor.snapshot.rows[1]!.prompt).toBe('Which command lists it?');
    await suite.api.verify.setTests({ name: NAME, tests: TESTS });
  });

  it('a new version inherits the tests until saved with it; an unknown skill is an error', async () => {
    await suite.api.skills.save({ name: NAME, content: SKILLS[NAME].replace('Read the input', 'Read all the input') });
    const editor = new SkillTestsEditor(suite.api, () => {});
    await editor.load(NAME, 2);
    expect(editor.snapshot).toMatchObject({ skill: { version: 2 }, from: 1 });
    expect(await editor.save()).toBe(true);
    expect(editor.snapshot.from).toBe(2);
    expect((await suite.api.verify.tests({ name: NAME, version: 1 })).from).toBe(1);

    expect(await editor.load('no-such-skill', 1)).toBe(false);
    expect(editor.snapshot.error?.code).toBe('not_found');
  });
});

describe('Verify', () => {
  const skill = { name: NAME, version: 2 };

  it.each(['none', 'in_context'] as const)('%s: streams each outcome and reports the pass rate', async (mode) => {
    const snaps: VerifySnapshot[] = [];
    const run = new VerifyRun(suite.api, (s) => snaps.push(s));
    await run.start(skill, mode);
    const s = run.snapshot;
    expect(s.status).toBe('done');
    expect(s.result).toMatchObject({ mode, adapter: null, n: 2, passed: 1, passRate: 0.5 });
    expect(s.result!.results.map((r) => [r.id, r.passed])).toEqual([
      ['always', true],
      ['never', false],
    ]);
    expect(s.result!.results[1]!.reason).toMatch(/^does not pass/);
    expect(s.total).toBe(2);
    expect(s.outcomes.map((o) => o.id).sort()).toEqual(['always', 'never']);
    expect(snaps.some((x) => x.status === 'running' && x.total === 2)).toBe(true);
  });

  it('instant compiles the version (chunks streamed), then the adapter mode reuses that adapter', async () => {
    const snaps: VerifySnapshot[] = [];
    const run = new VerifyRun(suite.api, (s) => snaps.push(s));
    await run.start(skill, 'instant');
    expect(run.snapshot.status).toBe('done');
    const adapter = run.snapshot.result!.adapter!;
    expect(adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(snaps.some((x) => x.compile !== null && x.compile.chunks > 0)).toBe(true);
    expect(run.snapshot.result!.passRate).toBe(0.5);

    await run.start(skill, 'adapter', adapter);
    expect(run.snapshot.result).toMatchObject({ mode: 'adapter', adapter, passRate: 0.5 });
  });

  it('refuses the adapter mode without an adapter (nothing sent), and reports the service refusing one', async () => {
    const run = new VerifyRun(suite.api, () => {});
    await run.start(skill, 'adapter', null);
    expect(run.snapshot).toMatchObject({ status: 'failed', error: { code: 'invalid_input' } });
    await run.start(skill, 'adapter', 'ffffffffffff');
    expect(run.snapshot.status).toBe('failed');
    expect(run.snapshot.error!.code).toBe('not_found');
  });

  it('cancel ends the run as cancelled', async () => {
    const run = new VerifyRun(suite.api, () => {});
    const done = run.start({ name: NAME, version: 1 }, 'instant');
    run.cancel();
    expect(run.snapshot.cancelling).toBe(true);
    await done;
    expect(run.snapshot).toMatchObject({ status: 'cancelled', cancelling: false, result: null });
  });
});
