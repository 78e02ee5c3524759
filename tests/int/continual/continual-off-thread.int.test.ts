// continual.run off the main thread: its generations go through the engine worker and its EMA step and
// lesson means through the adapter algebra worker, and the global versions it stores hold exactly the
// tensors the same algebra gives in this thread. Real services, SQLite and the bundle-hyper fixture.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ContinualMode, ContinualRunResult } from '../../../common/api/continual-schemas';
import { sharedAlgebra } from '../../../main/adapters/algebra-client';
import { emaStep } from '../../../main/adapters/ema';
import { cat, linearBaseline } from '../../../main/adapters/merge';
import type { Adapter } from '../../../main/adapters/types';
import { BundleRegistry } from '../../../main/api/services/bundle-registry';
import { ContinualService } from '../../../main/api/services/continual-service';
import { EngineService } from '../../../main/api/services/engine-service';
import { padRank } from '../../../main/continual/absorb';
import { sharedEngine } from '../../../main/engine/engine-client';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { AdaptersRepo } from '../../../main/store/adapters-repo';
import { AdoptionsRepo } from '../../../main/store/adoptions-repo';
import { RUNS_DIR, RunWorkspace } from '../../../main/api/services/run-workspace';
import { openDatabase } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { HYPER_BUNDLE } from '../compile/fixture';

const RUN = { suite: 'skillworld', episodes: 2, seed: 0, demos: 2, tasks: 2, maxTokens: 8, tier: 'instant' } as const;

let dir: string;
let db: Database;
let engine: EngineService;
let repo: AdaptersRepo;
let bundles: BundleRegistry;
let service: ContinualService;
// The process's two workers, watched (the calls go through to them).
const generate = vi.spyOn(sharedEngine(), 'generateBatch');
const algebra = vi.spyOn(sharedAlgebra(), 'run');
/** The algebra jobs sent to the worker since the last run began ('merge:cat', 'ema', …). */
const jobs = () =>
  algebra.mock.calls.map(([op, arg]) => (op === 'merge' ? `merge:${(arg as { method: string }).method}` : op));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-continual-thread-'));
  db = openDatabase(join(dir, 'studio.db'));
  const skills = new SkillsRepo(db);
  engine = new EngineService({ defaultBundleDir: HYPER_BUNDLE });
  repo = new AdaptersRepo(db, dir);
  bundles = new BundleRegistry(engine, repo);
  service = new ContinualService(
    {
      runsDir: join(dir, RUNS_DIR),
      engine,
      library: { skills, repo, bundles, adoptions: new AdoptionsRepo(db) },
    },
    () => ({}),
  );
});
afterAll(async () => {
  ws?.close();
  service.dispose();
  generate.mockRestore();
  algebra.mockRestore();
  await engine.dispose();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(mode: ContinualMode): Promise<ContinualRunResult> {
  generate.mockClear();
  algebra.mockClear();
  const signal = new AbortController().signal;
  const r = await service.run({ ...RUN, mode }, { emit: () => undefined, signal });
  ws?.close();
  ws = RunWorkspace.open(join(dir, RUNS_DIR), r.run, engine);
  return r;
}
/** The last run's workspace, where its lessons and global versions are. */
let ws: RunWorkspace | undefined;

const tensorsSha = (a: Adapter) => sha256Hex(encodeAdapter(a));
const head = async () => ws!.repo.globalHead((await ws!.bundles.current()).rowId)!;
const sources = (rowId: number) => {
  const r = ws!.repo.get(rowId)!.recipe;
  if (r.kind !== 'ema' && r.kind !== 'merge') throw new Error(`recipe ${r.kind}`);
  return r.sources;
};
const load = (key: string) => ws!.repo.load(ws!.repo.resolve(key).rowId);

describe('continual.run off the main thread', () => {
  it('merge: one EMA step per lesson in the algebra worker, stored as the in-thread step computes it', async () => {
    const r = await run('merge');
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2]);
    expect(jobs()).toEqual(['ema', 'ema']);
    // Held-out tasks: 2 after episode 1, 4 after episode 2, one engine-worker batch each.
    expect(generate).toHaveBeenCalledTimes(2);

    const v2 = await head();
    const [prev, lesson] = sources(v2.adapterRowId);
    const want = emaStep(load(prev!), load(lesson!), 0.1, 16);
    expect(v2.adapterTensorsSha256).toBe(tensorsSha(want));
  });

  it.each(['cat', 'linear'] as const)('%s: the mean of the lessons in the worker, the same tensors', async (mode) => {
    const r = await run(mode);
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2]); // each run has its own global adapter
    expect(jobs()).toEqual([`merge:${mode}`, `merge:${mode}`]);
    expect(generate).toHaveBeenCalledTimes(2);

    const lessons = sources((await head()).adapterRowId).map((k) => load(k!));
    const top = Math.max(...lessons.map((a) => a.rank));
    const want =
      mode === 'cat'
        ? cat(lessons, [0.5, 0.5])
        : linearBaseline(
            lessons.map((a) => padRank(a, top)),
            [0.5, 0.5],
          );
    expect((await head()).adapterTensorsSha256).toBe(tensorsSha(want));
  });

  it('in_context: no algebra; its generations go through the engine worker too', async () => {
    const r = await run('in_context');
    expect(r.episodes.map((e) => e.n)).toEqual([2, 4]);
    expect(jobs()).toEqual([]);
    expect(generate).toHaveBeenCalledTimes(2);
  });
});
