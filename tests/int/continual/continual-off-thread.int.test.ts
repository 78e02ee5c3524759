// continual.run off the main thread: its generations go through the engine worker and its EMA step and
// lesson means through the adapter algebra worker, and the global versions it stores hold exactly the
// tensors the same algebra gives in this thread. Real services, SQLite and the bundle-hyper fixture.
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ContinualMode, ContinualRunResult } from '../../../common/api/continual-schemas';
import { sharedAlgebra } from '../../../main/adapters/algebra-client';
import { emaStep } from '../../../main/adapters/ema';
import { cat, linearBaseline } from '../../../main/adapters/merge';
import type { Adapter } from '../../../main/adapters/types';
import { padRank } from '../../../main/continual/absorb';
import { sharedEngine } from '../../../main/engine/engine-client';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { RUNS_DIR, RunWorkspace } from '../../../main/api/services/run-workspace';
import { memory, studioSuite } from '../api/transports';
import { HYPER_BUNDLE } from '../compile/fixture';

const RUN = { suite: 'skillworld', episodes: 2, seed: 0, demos: 2, tasks: 2, maxTokens: 8, tier: 'instant' } as const;

const s = studioSuite(memory, 'pskills-continual-thread-', { defaultBundleDir: HYPER_BUNDLE });
// The process's two workers, watched (the calls go through to them).
const generate = vi.spyOn(sharedEngine(), 'generateBatch');
const algebra = vi.spyOn(sharedAlgebra(), 'run');
/** The algebra jobs sent to the worker since the last run began ('merge:cat', 'ema', …). */
const jobs = () =>
  algebra.mock.calls.map(([op, arg]) => (op === 'merge' ? `merge:${(arg as { method: string }).method}` : op));

afterAll(() => {
  ws?.close();
  generate.mockRestore();
  algebra.mockRestore();
});

async function run(mode: ContinualMode): Promise<ContinualRunResult> {
  generate.mockClear();
  algebra.mockClear();
  const r = await s.api.continual.run({ ...RUN, mode }).result;
  ws?.close();
  ws = RunWorkspace.open(join(s.dataDir, RUNS_DIR), r.run, s.studio.engine);
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
