// evolve keeps its verifier runs as trajectories: one per candidate, test and mode (in context and
// compiled), source `evolve`, linked to the run and candidate, with the checker's outcome; none when
// the storeTrajectories setting is off. Real services, a SQLite file, the bundle-hyper fixture.
import { beforeAll, describe, expect, it } from 'vitest';
import { HYPER_BUNDLE } from '../compile/fixture';
import { EVOLVE_TESTS, evolveSkill } from './fixture';
import { direct, studioSuite } from '../api/transports';

const RUN = { name: 'sql-review', iterations: 1, candidates: 2, maxTokens: 4, seed: 1 } as const;

const s = studioSuite(direct, 'pskills-evolve-traj-', { defaultBundleDir: HYPER_BUNDLE });

beforeAll(async () => {
  await s.api.skills.save({ name: 'sql-review', content: evolveSkill('sql-review') });
  await s.api.verify.setTests({ name: 'sql-review', tests: EVOLVE_TESTS });
});

describe('evolve trajectories', () => {
  it('stores each scored candidate × test × mode, linked to the run, with the verdict', async () => {
    const r = await s.api.evolve.run(RUN).result;
    const detail = await s.api.evolve.get({ run: r.run.id });
    const scored = detail.candidates.filter((c) => c.score !== null);
    const list = await s.api.trajectories.list({ source: 'evolve', limit: 1000 });
    expect(list.total).toBe(scored.length * EVOLVE_TESTS.length * 2);

    const shown = await Promise.all(list.items.map((t) => s.api.trajectories.show({ id: t.id })));
    for (const t of shown) {
      const link = (t.details as { evolve: { run: string; candidate: number; sha256: string } }).evolve;
      expect(link.run).toBe(r.run.id);
      const c = scored.find((x) => x.id === link.candidate)!;
      expect(link.sha256).toBe(c.sha256);
      expect(t.skill).toMatchObject({ name: 'sql-review', version: 1 });
      expect(['in_context', 'instant']).toContain(t.condition);
      // The verdict is the candidate's own score for that test and mode.
      const test = t.verdict!.test!;
      const failed = c.scores![t.condition as 'in_context' | 'instant']!.failed.map((f) => f.id);
      expect(t.verdict!.passed).toBe(!failed.includes(test));
      expect(t.messages.at(-1)!.role).toBe('assistant');
    }
    // "always" passes and "never" fails on every candidate and mode.
    expect(shown.filter((t) => t.verdict!.passed).map((t) => t.verdict!.test)).toEqual(
      shown.filter((t) => t.verdict!.test === 'always').map(() => 'always'),
    );
  });

  it('stores none while the storeTrajectories setting is off', async () => {
    const before = (await s.api.trajectories.list({ source: 'evolve' })).total;
    await s.api.settings.set({ storeTrajectories: false });
    try {
      await s.api.evolve.run({ ...RUN, seed: 2 }).result;
    } finally {
      await s.api.settings.set({ storeTrajectories: true });
    }
    expect((await s.api.trajectories.list({ source: 'evolve' })).total).toBe(before);
  });
});
