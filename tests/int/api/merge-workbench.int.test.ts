// The Adapters page's state over the in-memory transport against the real services and the tiny
// fixture bundle: the merge workbench (renderer/src/lib/adapters/merge-workbench.ts) previews and saves, the
// visualizer's loader (adapter-visual.ts) gathers a merge's charts, and the global timeline's update
// and version comparison (global-compare.ts) go through ema.update and adapters.similarity.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AdapterSummary } from '../../../common/api/adapter-schemas';
import { loadVisual } from '../../../renderer/src/lib/adapters/adapter-visual';
import { compareVersions, emaUpdate } from '../../../renderer/src/lib/adapters/global-compare';
import { MergeWorkbench, type WorkbenchSnapshot } from '../../../renderer/src/lib/adapters/merge-workbench';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { memory, studioSuite } from './transports';

describe('Adapters page state over the in-memory transport', () => {
  const imported: AdapterSummary[] = [];

  const suite = studioSuite(memory, 'pskills-workbench-', { defaultBundleDir: FIXTURE_BUNDLE });
  beforeAll(async () => {
    for (const [seed, opts] of [
      [1, {}],
      [2, {}],
      [3, { rank: 2, alpha: 2 }],
    ] as const) {
      const dir = join(suite.dataDir, `peft-${seed}`);
      await writeFixturePeft(dir, seed, opts);
      imported.push((await suite.api.adapters.import({ dir })).adapter);
    }
  });

  it('workbench: preview measures without storing, an edit clears it, save stores once', async () => {
    const snaps: WorkbenchSnapshot[] = [];
    const saved: AdapterSummary[] = [];
    const bench = new MergeWorkbench(
      suite.api,
      (s) => snaps.push(s),
      (a) => saved.push(a),
    );
    expect(await bench.preview()).toBe(false); // no picks: nothing is called
    bench.toggle(imported[0]!);
    bench.toggle(imported[2]!);
    bench.setWeight(imported[2]!.id, -2);
    expect(bench.snapshot.problem).toBeNull();
    expect(await bench.preview()).toBe(true);
    const p = bench.snapshot.preview!;
    expect(p).toMatchObject({ method: 'cat', rank: 6, weights: [1, -2], existing: null });
    expect(p.error.overall).toBeLessThan(1e-5);
    expect(bench.snapshot.similarity!.ids).toEqual([imported[0]!.id, imported[2]!.id]);
    expect(bench.snapshot.similarity!.linearVsCat).toEqual({ unavailable: expect.stringMatching(/equal ranks/) });
    expect(snaps.some((s) => s.busy === 'preview')).toBe(true);
    expect(await suite.api.adapters.list({})).toHaveLength(3);

    bench.setMethod('svd');
    expect(bench.snapshot.preview).toBeNull();
    bench.setRank(2);
    expect(await bench.preview()).toBe(true);
    expect(bench.snapshot.preview!.energyKept!.overall).toBeLessThan(1);

    expect(await bench.save()).toBe(true);
    expect(bench.snapshot.saved).toMatchObject({ created: true, adapter: { rank: 2 } });
    expect(bench.snapshot.preview!.existing).toBe(bench.snapshot.saved!.adapter.id);
    expect(saved.map((a) => a.id)).toEqual([bench.snapshot.saved!.adapter.id]);
    expect(await bench.save()).toBe(true);
    expect(bench.snapshot.saved!.created).toBe(false);
    expect(await suite.api.adapters.list({})).toHaveLength(4);

    bench.setMethod('linear');
    expect(bench.snapshot.problem).toBe('linear needs equal ranks; these have 4, 2');
    expect(await bench.save()).toBe(false);
    bench.setMethod('cat');
    bench.setRehearse(5); // imported adapters have no skill to practise
    expect(bench.snapshot.problem).toBe(
      `rehearsal practises each adapter's skill; ${imported[0]!.id} comes from no skill version`,
    );
    expect(await bench.save()).toBe(false);
  });

  it('workbench: an API refusal is shown as the error, not thrown', async () => {
    const bench = new MergeWorkbench(suite.api, () => {});
    bench.toggle(imported[0]!);
    bench.toggle({ id: 'ffffffffffff', rank: 4 });
    expect(await bench.preview()).toBe(false);
    expect(bench.snapshot.error).toMatchObject({ code: 'not_found' });
    expect(bench.snapshot.busy).toBeNull();
  });

  it('visualizer: a cat merge brings its blocks, heatmap norms, and its sources compared', async () => {
    const merged = (
      await suite.api.adapters.merge({ ids: [imported[0]!.id, imported[1]!.id], method: 'cat', weights: [1, 0.5] })
        .result
    ).adapter;
    const d = await loadVisual(suite.api, merged.id);
    expect(d.visual.blocks.map((b) => [b.source, b.weight, b.rank])).toEqual([
      [imported[0]!.id, 1, 4],
      [imported[1]!.id, 0.5, 4],
    ]);
    expect(d.detail.stats.norms.perTarget).toHaveLength(14);
    expect(d.similarity!.cosine[0]![0]).toBeCloseTo(1, 6);
    expect('overall' in d.similarity!.linearVsCat && d.similarity!.linearVsCat.overall).toBeGreaterThan(0.1);
    const plain = await loadVisual(suite.api, imported[0]!.id);
    expect(plain.similarity).toBeNull();
    expect(plain.visual.truncation).toBeNull();
  });

  it('timeline: update appends versions; comparing two gives cosine, norms and their distance', async () => {
    const v1 = await emaUpdate(suite.api, imported[0]!.id, 0.5);
    const v2 = await emaUpdate(suite.api, imported[1]!.id, 0.5, 4);
    expect([v1.version, v1.beta, v2.version, v2.beta, v2.rank]).toEqual([1, 1, 2, 0.5, 4]);
    const c = await compareVersions(suite.api, v1, v2);
    const [g1, g2] = await Promise.all([
      suite.api.adapters.get({ id: v1.adapter }),
      suite.api.adapters.get({ id: v2.adapter }),
    ]);
    expect(c.a).toMatchObject({ version: 1, norm: g1.stats.norms.overall, rank: 4 });
    expect(c.b).toMatchObject({ version: 2, norm: g2.stats.norms.overall, rank: 4 });
    // v2 = svd₄(0.5·v1 + 0.5·other): related to v1 but not equal.
    expect(c.cosine).toBeGreaterThan(0.3);
    expect(c.cosine).toBeLessThan(0.99);
    expect(c.distance).toBeGreaterThan(0);
    expect(c.perTarget).toHaveLength(14);
    expect(c.perTarget[0]!.normA).toBeCloseTo(g1.stats.norms.perTarget[0]!.value, 9);
    const v3 = await suite.api.ema.rollback({ version: 1 });
    const same = await compareVersions(suite.api, v1, v3);
    expect(same.cosine).toBeCloseTo(1, 9);
    expect(same.distance).toBeLessThan(1e-6 * same.a.norm);
  });
});
