// `pskills continual run` as a user runs it: a child process on the bundle-hyper fixture, the JSON
// stable shape on stdout, a table without --json, one-line errors for bad flags, and a run
// killed with SIGKILL that `--resume RUN` finishes without redoing what was stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HYPER_BUNDLE } from '../compile/fixture';
import Database from 'better-sqlite3';
import { inLibrary, killWhen, pskillsIn } from './spawn-cli';

let dataDir: string;
const pskills = pskillsIn(() => dataDir, 120_000);
// The fixture has no train-step graph: lessons compile instantly.
const small = [
  '--suite',
  'skillworld',
  '--episodes',
  '2',
  '--demos',
  '1',
  '--tasks',
  '1',
  '--max-tokens',
  '4',
  '--tier',
  'instant',
];
/** The run's own database (its workspace under the data folder's runs/). */
function inRun<T>(run: string, look: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'runs', run, 'run.db'), { readonly: true });
  try {
    return look(db);
  } finally {
    db.close();
  }
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-continual-cli-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('pskills continual run', () => {
  it('--json prints {mode, episodes: [{episode, pass_rate, global_version}], final_pass_rate}', () => {
    const r = pskills('continual', 'run', ...small, '--mode', 'cat', '--seed', '3', '--bundle', HYPER_BUNDLE, '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as {
      mode: string;
      episodes: { episode: number; pass_rate: number; global_version: number | null }[];
      final_pass_rate: number;
      seed: number;
    };
    expect(j.mode).toBe('cat');
    expect(j.seed).toBe(3);
    expect(j.episodes.map((e) => [e.episode, e.global_version])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    for (const e of j.episodes) expect(e.pass_rate).toBeGreaterThanOrEqual(0);
    expect(j.final_pass_rate).toBe(j.episodes[1]!.pass_rate);
    // The global versions are the run's own; the Library's timeline stays empty.
    const h = pskills('ema', 'history', '--bundle', HYPER_BUNDLE, '--json');
    expect((JSON.parse(h.out) as { versions: unknown[] }).versions).toHaveLength(0);
  });

  it('prints a table per episode without --json, progress on stderr', () => {
    const r = pskills('continual', 'run', ...small, '--mode', 'in_context', '--bundle', HYPER_BUNDLE);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^episode\tpass rate\tpassed\/n\tglobal\tlesson\n1\t\d\.\d{3}\t\d\/1\t-\tlesson-/);
    expect(r.out).toMatch(/in_context: final pass rate \d\.\d{3} over 2 held-out tasks/);
    expect(r.err).toMatch(/^episode 1\/2: /m);
  });

  it('refuses a bad mode, suite or count with a one-line error and status 2', () => {
    const mode = pskills('continual', 'run', ...small, '--mode', 'average');
    expect(mode.code).toBe(2);
    expect(mode.err).toBe('pskills: --mode: "average" is not one of merge, cat, linear, independent, in_context\n');
    const suite = pskills('continual', 'run', '--suite', 'humaneval', '--episodes', '2', '--mode', 'merge');
    expect(suite.code).toBe(2);
    expect(suite.err).toMatch(/--suite: "humaneval" is not one of skillworld/);
    const n = pskills('continual', 'run', '--suite', 'skillworld', '--episodes', '0', '--mode', 'merge');
    expect(n.code).toBe(2);
    expect(n.err).toMatch(/--episodes/);
    const usage = pskills('continual', 'run', '--mode', 'merge');
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/usage: pskills continual run \(--suite skillworld --episodes N .* \| --resume RUN\)/);
  });

  it('killed with SIGKILL mid-run leaves an intact library; --resume keeps the stored episodes and finishes', async () => {
    const g0 = 0; // a run's workspace starts with no global adapter
    const args = ['continual', 'run', ...small, '--episodes', '4', '--mode', 'merge', '--seed', '5'];
    const err = await killWhen(dataDir, /^episode 2\/4: /m, [...args, '--bundle', HYPER_BUNDLE]);
    const run = /started run ([0-9a-f]{12})/.exec(err)![1]!;
    const rows = (db: Database.Database) =>
      db
        .prepare(
          `SELECT e.episode, e.global_version, e.absorbed_at, e.measured_at FROM continual_episodes e
           JOIN continual_runs r ON r.id = e.run_id WHERE r.uid = ? ORDER BY e.episode`,
        )
        .all(run) as { episode: number; global_version: number; absorbed_at: string; measured_at: string | null }[];
    const globals = (db: Database.Database) =>
      (db.prepare('SELECT count(*) AS n FROM global_adapter_versions').get() as { n: number }).n;

    const before = inRun(run, (db) => {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT status FROM continual_runs WHERE uid = ?').get(run)).toEqual({ status: 'running' });
      return { episodes: rows(db), globals: globals(db) };
    });
    // The Library's own database has no trace of the run.
    inLibrary(dataDir, (db) => {
      expect(db.prepare('SELECT count(*) AS n FROM global_adapter_versions').get()).toEqual({ n: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM skills').get()).toEqual({ n: 0 });
    });
    // Episode 1 was measured before episode 2 began; the kill came before the run's end.
    expect(before.episodes[0]).toMatchObject({ episode: 1, measured_at: expect.any(String) });
    expect(before.episodes.filter((e) => e.measured_at !== null).length).toBeLessThan(4);
    // Each stored episode's lesson made exactly one global version (absorb and its row land together).
    expect(before.globals).toBe(g0 + before.episodes.length);

    const resumed = pskills('continual', 'run', '--resume', run, '--bundle', HYPER_BUNDLE, '--json');
    expect(resumed.code, resumed.err).toBe(0);
    const j = JSON.parse(resumed.out) as { run: string; episodes: { episode: number; global_version: number }[] };
    expect(j.run).toBe(run);
    expect(j.episodes.map((e) => e.episode)).toEqual([1, 2, 3, 4]);
    expect(j.episodes.map((e) => e.global_version)).toEqual([g0 + 1, g0 + 2, g0 + 3, g0 + 4]);

    inRun(run, (db) => {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT status FROM continual_runs WHERE uid = ?').get(run)).toEqual({ status: 'done' });
      const after = rows(db);
      // What was stored before the kill is untouched: no episode absorbed or measured twice.
      for (const e of before.episodes) {
        const now = after.find((a) => a.episode === e.episode)!;
        expect(now.absorbed_at).toBe(e.absorbed_at);
        if (e.measured_at !== null) expect(now.measured_at).toBe(e.measured_at);
      }
      expect(globals(db)).toBe(g0 + 4);
    });

    const again = pskills('continual', 'run', '--resume', run, '--mode', 'cat');
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/--resume goes on with the run as it was started/);
  });
});
