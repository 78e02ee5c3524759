// evolve.* round-tripped through the in-memory transport and the web host, against the real services,
// a SQLite file and the bundle-hyper fixture (a random model: scores are whatever its answers earn, so
// this suite checks the loop's records and shapes; runner.int.test.ts checks who wins).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';
import { entries } from '../../../common/api/define';
import type { EvolveEvent } from '../../../common/api/evolve-schemas';
import { failure, studioSuite, transports } from '../api/transports';
import { HYPER_BUNDLE } from '../compile/fixture';
import { EVOLVE_TESTS, evolveSkill } from './fixture';

/** The namespace this suite covers (tests/int/api/studio-suite.api.int.test.ts leaves it out). */
export const EVOLVE_NAMESPACES = ['evolve'];

describe.each(transports)('evolve over $name', (transport) => {
  const covered = new Set<string>();

  const suite = studioSuite(transport, 'pskills-evolve-api-', { defaultBundleDir: HYPER_BUNDLE });

  beforeAll(async () => {
    for (const name of ['sql-review', 'review-branch'])
      await suite.api.skills.save({ name, content: evolveSkill(name) });
    await suite.api.verify.setTests({ name: 'sql-review', tests: EVOLVE_TESTS });
  });
  afterAll(async () => {
    const mine = entries(studioContract)
      .map(([w]) => w)
      .filter((w) => EVOLVE_NAMESPACES.includes(w.split('.')[0]!));
    expect([...covered].sort()).toEqual(mine.sort());
  });

  it('evolve.run scores the baseline and each candidate in context and compiled, and streams progress', async () => {
    const events: EvolveEvent[] = [];
    const r = await suite.api.evolve.run(
      { name: 'sql-review', iterations: 2, candidates: 2, maxTokens: 4, seed: 3 },
      (e) => events.push(e),
    ).result;
    covered.add('evolve.run');
    expect(r.run).toMatchObject({
      skill: { name: 'sql-review', version: 1 },
      generator: 'offline',
      modes: ['in_context', 'instant'],
      status: 'done',
      iterationsDone: 2,
    });
    // "always" passes and "never" fails whatever the model says: every text scores 0.5.
    expect(r.baselineScore).toBe(0.5);
    expect(r.iterations).toHaveLength(2);
    for (const it of r.iterations) {
      expect(it.candidateScores.length).toBeGreaterThan(0);
      expect(it.candidateScores.every((s) => s === 0.5)).toBe(true);
      expect(it.bestScore).toBe(0.5);
    }
    // Nothing beat the baseline: version 1 stays, and its compiled adapter is named.
    expect(r.best).toEqual({ version: 1, score: 0.5 });
    expect(r.run.resultVersion).toBeNull();
    expect(r.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(events[0]).toMatchObject({ type: 'run', run: r.run.id, resumed: false });
    const scored = events.filter((e) => e.type === 'scored');
    expect(scored).toHaveLength(1 + r.iterations.reduce((n, it) => n + it.candidateScores.length, 0));

    const runs = await suite.api.evolve.list({ name: 'sql-review' });
    covered.add('evolve.list');
    expect(runs.map((x) => x.id)).toContain(r.run.id);

    const detail = await suite.api.evolve.get({ run: r.run.id });
    covered.add('evolve.get');
    const baseline = detail.candidates.find((c) => c.iteration === 0)!;
    expect(baseline).toMatchObject({ operator: 'baseline', diff: '', score: 0.5 });
    expect(baseline.content).toBe(evolveSkill('sql-review'));
    for (const c of detail.candidates.filter((x) => x.iteration > 0)) {
      expect(c.scores!.in_context).toMatchObject({ n: 2, passed: 1, passRate: 0.5 });
      expect(c.scores!.instant).toMatchObject({ n: 2, passed: 1, passRate: 0.5 });
      expect(c.scores!.in_context!.failed.map((f) => f.id)).toEqual(['never']);
      expect(c.diff).toContain('+++ b/SKILL.md');
    }
    expect(detail.iterationScores).toEqual(r.iterations);

    // Accept one candidate by hand: the next version, provenance evolve, compiled; reject another.
    const [a, b] = detail.candidates.filter((x) => x.iteration > 0);
    const accepted = await suite.api.evolve.accept({ run: r.run.id, candidate: a!.id });
    covered.add('evolve.accept');
    expect(accepted.version).toMatchObject({
      version: 2,
      parentVersion: 1,
      provenance: { kind: 'evolve', run: r.run.id, candidate: a!.id, score: 0.5, from: 1 },
    });
    expect(accepted.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect((await suite.api.skills.get({ name: 'sql-review' })).content).toBe(a!.content);
    expect((await suite.api.verify.tests({ name: 'sql-review' })).from).toBe(1); // the new version inherits the tests
    const rejected = await suite.api.evolve.reject({ run: r.run.id, candidate: b!.id });
    covered.add('evolve.reject');
    expect(rejected).toMatchObject({ id: b!.id, status: 'rejected', version: null });
    expect((await failure(suite.api.evolve.reject({ run: r.run.id, candidate: a!.id }))).code).toBe('conflict');
    expect((await failure(suite.api.evolve.accept({ run: r.run.id, candidate: a!.id }))).code).toBe('conflict');
    expect((await failure(suite.api.evolve.accept({ run: r.run.id, candidate: baseline.id }))).code).toBe(
      'invalid_input',
    );

    // A finished run resumes to its result.
    const again = await suite.api.evolve.resume({ run: r.run.id }).result;
    covered.add('evolve.resume');
    expect(again.iterations).toEqual(r.iterations);
  });

  it('refuses a skill without tests, an unknown run, an unconfigured LLM, bad input; nothing is stored', async () => {
    const before = (await suite.api.evolve.list({})).length;
    expect((await failure(suite.api.evolve.run({ name: 'review-branch', iterations: 1 }).result)).message).toMatch(
      /review-branch@1 has no verifier tests/,
    );
    expect(
      (await failure(suite.api.evolve.run({ name: 'sql-review', iterations: 1, generator: 'llm' }).result)).message,
    ).toMatch(/needs the settings llmBaseUrl and llmModel/);
    expect((await failure(suite.api.evolve.run({ name: 'sql-review', iterations: 0 }).result)).code).toBe(
      'invalid_input',
    );
    expect((await failure(suite.api.evolve.get({ run: 'abcdefabcdef' }))).code).toBe('not_found');
    expect((await failure(suite.api.evolve.get({ run: 'nope' }))).code).toBe('invalid_input');
    expect(await suite.api.evolve.list({})).toHaveLength(before);
  });

  it('cancel stops a run between whole rows; resume finishes it', async () => {
    await suite.api.verify.setTests({ name: 'review-branch', tests: EVOLVE_TESTS });
    let runId = '';
    const handle = suite.api.evolve.run({ name: 'review-branch', iterations: 2, candidates: 2, maxTokens: 4 }, (e) => {
      if (e.type === 'run') runId = e.run;
      if (e.type === 'scored' && e.iteration === 1) handle.cancel();
    });
    expect((await failure(handle.result)).code).toBe('cancelled');
    const cut = await suite.api.evolve.get({ run: runId });
    expect(cut.status).toBe('cancelled');
    expect(cut.candidates.every((c) => (c.score === null) === (c.scores === null))).toBe(true);
    expect(cut.candidates.filter((c) => c.iteration === 1).length).toBeGreaterThan(0);
    const resumed = await suite.api.evolve.resume({ run: runId }).result;
    expect(resumed.run).toMatchObject({ status: 'done', iterationsDone: 2 });
    const done = await suite.api.evolve.get({ run: runId });
    // The candidates stored before the cancel were kept, not proposed again.
    expect(done.candidates.filter((c) => c.iteration === 1).map((c) => c.id)).toEqual(
      cut.candidates.filter((c) => c.iteration === 1).map((c) => c.id),
    );
  });
});
