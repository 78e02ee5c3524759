// `pskills evolve` as a user runs it, on the bundle-hyper fixture: killed with SIGKILL in the middle
// of a run, the library passes PRAGMA integrity_check, and `--resume RUN` goes on from the stored rows
// (what was scored is not scored again) and prints the stable JSON shape.
import { beforeAll, describe, expect, it } from 'vitest';
import { direct, studioSuite } from '../api/transports';
import { inLibrary, killWhen, pskillsIn } from '../cli/spawn-cli';
import { HYPER_BUNDLE } from '../compile/fixture';
import { EVOLVE_TESTS, evolveSkill } from './fixture';

const s = studioSuite(direct, 'pskills-evolve-cli-', { defaultBundleDir: HYPER_BUNDLE });
const pskills = pskillsIn(() => s.dataDir);

beforeAll(async () => {
  await s.api.skills.save({ name: 'sql-review', content: evolveSkill('sql-review') });
  await s.api.verify.setTests({ name: 'sql-review', tests: EVOLVE_TESTS });
  await s.close(); // the CLI has the library to itself
});

interface Row {
  id: number;
  iteration: number;
  score: number | null;
  scored_at: string | null;
}

describe('pskills evolve', () => {
  it('refuses a call without --iterations or with settings beside --resume (status 2)', () => {
    expect(pskills('evolve', 'sql-review').code).toBe(2);
    const both = pskills('evolve', '--resume', 'abcdefabcdef', '--iterations', '2');
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--resume goes on with the run as it was started/);
  });

  it('killed with SIGKILL mid-run leaves an intact library; --resume finishes the run', async () => {
    const args = ['evolve', 'sql-review', '--iterations', '3', '--candidates', '2', '--max-tokens', '4'];
    const err = await killWhen(s.dataDir, /iteration 1 candidate 0: /, [...args, '--bundle', HYPER_BUNDLE]);
    const run = /started run ([0-9a-f]{12})/.exec(err)![1]!;

    const before = inLibrary(s.dataDir, (db) => {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(db.prepare('SELECT status FROM evolve_runs WHERE uid = ?').get(run)).toEqual({ status: 'running' });
      return db
        .prepare(
          'SELECT c.id, c.iteration, c.score, c.scored_at FROM evolve_candidates c JOIN evolve_runs r ON r.id = c.run_id WHERE r.uid = ? ORDER BY c.id',
        )
        .all(run) as Row[];
    });
    expect(before.filter((r) => r.score !== null).length).toBeGreaterThanOrEqual(2); // the baseline and one candidate
    expect(before.some((r) => r.iteration > 1)).toBe(false);

    const resumed = pskills('evolve', '--resume', run, '--bundle', HYPER_BUNDLE, '--json');
    expect(resumed.code, resumed.err).toBe(0);
    const out = JSON.parse(resumed.out) as Record<string, unknown>;
    expect(Object.keys(out).slice(0, 4)).toEqual(['skill', 'baseline_score', 'iterations', 'best']);
    expect(out).toMatchObject({ skill: 'sql-review', baseline_score: 0.5, best: { version: 1, score: 0.5 }, run });
    const iterations = out.iterations as { candidate_scores: number[]; best_score: number }[];
    expect(iterations).toHaveLength(3);
    for (const it of iterations) expect(Object.keys(it)).toEqual(['candidate_scores', 'best_score']);

    inLibrary(s.dataDir, (after) => {
      const rows = after
        .prepare(
          'SELECT c.id, c.iteration, c.score, c.scored_at FROM evolve_candidates c WHERE c.id IN (' +
            before.map((r) => r.id).join(',') +
            ') ORDER BY c.id',
        )
        .all() as Row[];
      // What was scored before the kill kept its score and time: nothing was scored twice.
      for (const [i, r] of before.entries()) if (r.score !== null) expect(rows[i]).toEqual(r);
      expect(after.prepare('SELECT status FROM evolve_runs WHERE uid = ?').get(run)).toEqual({ status: 'done' });
    });
  });
});
