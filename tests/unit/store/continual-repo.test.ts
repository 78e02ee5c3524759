// ContinualRepo on an in-memory database: an episode row and the global write it records land
// together or not at all, an episode is measured once, and a run is found by its id.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContinualRunInput } from '../../../common/api/continual-schemas';
import type { StudioError } from '../../../common/errors';
import { ContinualRepo } from '../../../main/store/continual-repo';
import { openDatabase } from '../../../main/store/db';

const INPUT: ContinualRunInput = { suite: 'skillworld', episodes: 3, mode: 'merge', seed: 2 };
const SHA = 'a'.repeat(64);
const MEASURED = { passed: 1, n: 2, adapter: 'abc', passedTasks: ['t1'], truncated: 0, ms: 5 };

let db: ReturnType<typeof openDatabase>;
let repo: ContinualRepo;
beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new ContinualRepo(db);
});
afterEach(() => db.close());

describe('ContinualRepo', () => {
  it('stores the run input and reads it back by id', () => {
    const run = repo.create(INPUT, SHA);
    expect(run.id).toMatch(/^[0-9a-f]{12}$/);
    expect(repo.get(run.id)).toMatchObject({ mode: 'merge', input: INPUT, bundleSha256: SHA, status: 'running' });
    expect(() => repo.get('000000000000')).toThrow(/no continual run "000000000000"/);
  });

  it('rolls the episode row back with the absorb that failed, and the absorb with a row that cannot land', () => {
    const run = repo.create(INPUT, SHA);
    db.exec('CREATE TABLE side (n INTEGER)');
    const write = (n: number) => () => (db.prepare('INSERT INTO side VALUES (?)').run(n), n);
    const ep = { episode: 1, world: 'w1', lesson: { name: 'lesson-w1', version: 1, summariser: 'template' } };
    expect(() =>
      repo.absorb(run, ep, () => {
        write(1)();
        throw new Error('svd failed');
      }),
    ).toThrow(/svd failed/);
    expect(repo.episodes(run)).toEqual([]);
    expect(repo.absorb(run, ep, write(2))).toBe(2);
    // The same episode again: the primary key refuses it, and the global write inside goes with it.
    expect(() => repo.absorb(run, ep, write(3))).toThrow(/UNIQUE/);
    expect(db.prepare('SELECT n FROM side').all()).toEqual([{ n: 2 }]);
    expect(repo.episodes(run)).toEqual([{ ...ep, globalVersion: 2, measured: null }]);
  });

  it('measures an episode once', () => {
    const run = repo.create(INPUT, SHA);
    repo.absorb(run, { episode: 1, world: 'w1', lesson: null }, () => null);
    repo.measured(run, 1, MEASURED);
    expect(repo.episodes(run)[0]!.measured).toEqual(MEASURED);
    const err = (() => {
      try {
        repo.measured(run, 1, MEASURED);
      } catch (e) {
        return e as StudioError;
      }
    })();
    expect(err?.code).toBe('conflict');
    expect(() => repo.measured(run, 2, MEASURED)).toThrow(/episode 2 .* already measured or not there/);
  });
});
