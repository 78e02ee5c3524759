// A merge with rehearsal (docs/distill.md "Merging distilled adapters"), on the tiny bundle with a
// train-step graph: two distilled skills merged by cat, then K steps over both skills' practice, each
// with its own text in context. The stored adapter is the rehearsed one at the merge's rank, its recipe
// says so, the same request returns it, and a source without a skill version is refused by name.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { MAX_REHEARSE, type MergeProgress } from '../../../common/api/adapter-schemas';
import { sharedEngine } from '../../../main/engine/engine-client';
import { MergeWorkbench } from '../../../renderer/src/lib/adapters/merge-workbench';
import { failure, memory, studioSuite } from '../api/transports';
import { greetSkill as skill, TRAIN_BUNDLE } from './greet-skill';

const s = studioSuite(memory, 'pskills-merge-rehearse-', { defaultBundleDir: TRAIN_BUNDLE });
const parts = vi.spyOn(sharedEngine(), 'distillParts');
afterAll(() => parts.mockRestore());

describe('merging with rehearsal', () => {
  it('stores the rehearsed cat merge, rehearsed on every source skill with its own text', async () => {
    const ids: string[] = [];
    for (const [name, word] of [
      ['greet', 'tests'],
      ['wave', 'hello'],
    ] as const) {
      await s.api.skills.save({ name, content: skill(name, word) });
      ids.push((await s.api.adapters.distill({ skill: { name }, steps: 1 }).result).adapter.id);
    }
    const plain = await s.api.adapters.merge({ ids, method: 'cat' }).result;
    parts.mockClear();
    const merged = await s.api.adapters.merge({ ids, method: 'cat', rehearse: 2 }).result;
    expect(merged.created).toBe(true);
    expect(merged.adapter.recipe).toMatchObject({ kind: 'merge', method: 'cat', rehearse: { steps: 2, seed: 0 } });
    // The train-step graph has one rank: the cat merge (rank 2r) is cut to r by svd, as the engine does.
    const single = (await s.api.adapters.get({ id: ids[0]! })).rank;
    expect(plain.adapter.rank).toBe(2 * single);
    expect(merged.adapter.rank).toBe(single);
    expect(merged.adapter.lineage.map((l) => l.id)).toEqual(ids);

    // One rehearsal: both skills, each with its own text, from the cat merge, 2 steps.
    expect(parts).toHaveBeenCalledTimes(1);
    const [, , p, o] = parts.mock.calls[0]!;
    expect(p.map((x) => x.skill)).toEqual([skill('greet', 'tests'), skill('wave', 'hello')]);
    expect(p.every((x) => x.questions.some((q) => q.question === 'hi'))).toBe(true);
    expect(o).toMatchObject({ steps: 2, seed: 0 });
    expect(o!.init!.rank).toBe(plain.adapter.rank);

    // What is stored is the rehearsal's result, not the merge it started from.
    expect(merged.adapter.tensorsSha256).not.toBe(plain.adapter.tensorsSha256);

    // The preview measures the merge before rehearsal and says that saving rehearses it.
    const preview = await s.api.adapters.mergePreview({ ids, method: 'cat', rehearse: 2 });
    expect(preview).toMatchObject({ rehearse: 2, rank: plain.adapter.rank, existing: merged.adapter.id });
    expect((await s.api.adapters.mergePreview({ ids, method: 'cat' })).rehearse).toBeNull();

    const again = await s.api.adapters.merge({ ids, method: 'cat', rehearse: 2 }).result;
    expect(again).toMatchObject({ created: false, adapter: { id: merged.adapter.id } });
    expect(parts).toHaveBeenCalledTimes(1);

    // The Adapters page's workbench asks for the same merge when its Rehearse field says 2.
    const bench = new MergeWorkbench(s.api, () => {});
    for (const a of (await s.api.adapters.list({})).filter((x) => ids.includes(x.id)).reverse()) bench.toggle(a);
    expect(bench.snapshot.picks.map((p) => p.id)).toEqual(ids);
    bench.setRehearse(2);
    expect(await bench.save()).toBe(true);
    expect(bench.snapshot.saved).toMatchObject({ created: false, adapter: { id: merged.adapter.id } });
  });

  it('streams the rehearsal step by step, and a cancel stops it and stores nothing', async () => {
    const ids = (await s.api.adapters.list({})).filter((x) => x.recipe.kind === 'distill').map((x) => x.id);
    const events: MergeProgress[] = [];
    await s.api.adapters.merge({ ids, method: 'cat', rehearse: 3, seed: 1 }, (e) => events.push(e)).result;
    expect(events.map((e) => `${e.phase} ${e.step}/${e.steps}`)).toEqual([
      'merge 0/3',
      'teacher 0/3',
      'train 1/3',
      'train 2/3',
      'train 3/3',
    ]);
    expect(events.filter((e) => e.phase === 'train').every((e) => Number.isFinite(e.loss))).toBe(true);

    // Cancelled at its first step: the caller's signal reaches the train loop, which stops between steps.
    const before = (await s.api.adapters.list({})).length;
    parts.mockClear();
    const seen: MergeProgress[] = [];
    const handle = s.api.adapters.merge({ ids, method: 'cat', rehearse: MAX_REHEARSE, seed: 2 }, (e) => {
      seen.push(e);
      if (e.phase === 'train') handle.cancel();
    });
    const err = await failure(handle.result);
    expect(err.code).toBe('cancelled');
    expect(err.message).toBe('merge cancelled; nothing was stored');
    // The engine's train loop itself was stopped: its run rejects rather than finishing its 400 steps.
    expect(parts).toHaveBeenCalledTimes(1);
    await expect(parts.mock.results[0]!.value).rejects.toMatchObject({ code: 'cancelled' });
    expect((await s.api.adapters.list({})).length).toBe(before);

    // The workbench's Cancel does the same, and says so; the recipe cannot change under a running save.
    const bench = new MergeWorkbench(s.api, (snap) => {
      if (snap.progress?.phase === 'train' && snap.cancel === null) {
        bench.setRehearse(1);
        bench.cancel();
      }
    });
    for (const a of (await s.api.adapters.list({})).filter((x) => ids.includes(x.id)).reverse()) bench.toggle(a);
    bench.setRehearse(MAX_REHEARSE);
    expect(await bench.save()).toBe(false);
    expect(bench.snapshot).toMatchObject({
      cancel: 'cancelled',
      busy: null,
      saved: null,
      error: null,
      progress: null,
      rehearse: MAX_REHEARSE,
    });
    expect((await s.api.adapters.list({})).length).toBe(before);
  });

  it('a source that comes from no skill version is refused by id, and nothing is stored', async () => {
    const [a, b] = (await s.api.adapters.list({})).filter((x) => x.recipe.kind === 'distill');
    const cat = (await s.api.adapters.merge({ ids: [a!.id, b!.id], method: 'cat' }).result).adapter;
    const before = (await s.api.adapters.list({})).length;
    const err = await failure(s.api.adapters.merge({ ids: [a!.id, cat.id], method: 'cat', rehearse: 1 }).result);
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain(`adapter ${cat.id} comes from no skill version`);
    expect((await s.api.adapters.list({})).length).toBe(before);
  });

  it('bad input is refused at the boundary: steps out of range, a seed without rehearse', async () => {
    const [a] = await s.api.adapters.list({});
    for (const bad of [{ rehearse: 0 }, { rehearse: 401 }, { seed: 3 }]) {
      const err = await failure(s.api.adapters.merge({ ids: [a!.id], method: 'cat', ...bad }).result);
      expect(err.code).toBe('invalid_input');
    }
  });
});
