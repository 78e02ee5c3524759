// The adapter library's StudioApi methods (adapters.*, ema.*), round-tripped through the in-memory
// transport and the web host against the real services, a SQLite file and the tiny fixture bundle.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMILARITY_DEPRECATION } from '../../../common/api/adapter-schemas';
import { studioContract } from '../../../common/api/contract';
import { entries } from '../../../common/api/define';
import { cat } from '../../../main/adapters/merge';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import type { Adapter } from '../../../main/adapters/types';
import { failure, studioSuite, transports } from '../api/transports';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

/** The namespaces this suite covers; tests/int/api/studio-suite.api.int.test.ts covers the rest. */
const ADAPTER_NAMESPACES = ['adapters', 'ema'];

describe.each(transports)('adapter library over $name', (transport) => {
  const covered = new Set<string>();
  const made: Adapter[] = [];
  const ids: string[] = [];

  const suite = studioSuite(transport, 'pskills-adapters-api-', { defaultBundleDir: FIXTURE_BUNDLE });

  beforeAll(async () => {
    for (const [n, seed] of [1, 2].entries()) made[n] = await writeFixturePeft(join(suite.dataDir, `peft-${n}`), seed);
    made[2] = await writeFixturePeft(join(suite.dataDir, 'peft-r2'), 3, { rank: 2, alpha: 2 });
  });
  afterAll(async () => {
    // adapters.compile: tests/int/compile/compile-suite.api.int.test.ts; adapters.distill and distillPlan: tests/int/adapters/distill-suite.studio.int.test.ts, tests/int/cli/distill-cli.int.test.ts, tests/int/engine/distill.int.test.ts
    const elsewhere = new Set(['adapters.compile', 'adapters.distill', 'adapters.distillPlan']);
    const mine = entries(studioContract)
      .map(([w]) => w)
      .filter((w) => ADAPTER_NAMESPACES.includes(w.split('.')[0]!) && !elsewhere.has(w));
    expect([...covered].sort()).toEqual(mine.sort());
  });

  it('adapters.import stores a fitting PEFT folder once', async () => {
    for (const dir of ['peft-0', 'peft-1', 'peft-r2']) {
      const r = await suite.api.adapters.import({ dir: join(suite.dataDir, dir) });
      expect(r.created).toBe(true);
      ids.push(r.adapter.id);
    }
    covered.add('adapters.import');
    const again = await suite.api.adapters.import({ dir: join(suite.dataDir, 'peft-0') });
    expect(again).toMatchObject({
      created: false,
      adapter: { id: ids[0], rank: 4, alpha: 8, recipe: { kind: 'import' }, bundle: { id: 'tiny-random' } },
    });
  });

  it('adapters.import names the layer, module and dimension that do not fit, and missing folders', async () => {
    await writeFixturePeft(join(suite.dataDir, 'peft-wrong'), 9, {
      shapes: [{ layer: 1, module: 'down', dIn: 96, dOut: 64 }],
    });
    const wrong = await failure(suite.api.adapters.import({ dir: join(suite.dataDir, 'peft-wrong') }));
    expect(wrong.code).toBe('invalid_input');
    expect(wrong.message).toMatch(/layer 1, module "down": d_in 96, the bundle has 128/);
    await writeFixturePeft(join(suite.dataDir, 'peft-layer'), 9, {
      shapes: [{ layer: 5, module: 'q', dIn: 64, dOut: 64 }],
    });
    expect((await failure(suite.api.adapters.import({ dir: join(suite.dataDir, 'peft-layer') }))).message).toMatch(
      /layer 5/,
    );
    const missing = await failure(suite.api.adapters.import({ dir: join(suite.dataDir, 'nope') }));
    expect(missing.code).toBe('not_found');
    expect((await suite.api.adapters.list({})).length).toBe(3);
  });

  it('adapters.list and adapters.get with visualizer statistics', async () => {
    const list = await suite.api.adapters.list({});
    covered.add('adapters.list');
    expect(list.map((a) => a.id).sort()).toEqual([...ids].sort());
    const d = await suite.api.adapters.get({ id: ids[0]! });
    covered.add('adapters.get');
    expect(d.shapes).toHaveLength(14);
    expect(d.stats.norms.perTarget).toHaveLength(14);
    const sq = d.stats.norms.perTarget.reduce((s, t) => s + t.value ** 2, 0);
    expect(d.stats.norms.overall).toBeCloseTo(Math.sqrt(sq), 6);
    for (const [i, t] of d.stats.singularValues.entries()) {
      expect(t.values).toHaveLength(4);
      expect([...t.values].sort((a, b) => b - a)).toEqual(t.values);
      // ‖ΔW‖_F² = Σσ² (rank 4: all singular values are listed)
      expect(Math.sqrt(t.values.reduce((s, v) => s + v * v, 0))).toBeCloseTo(d.stats.norms.perTarget[i]!.value, 4);
    }
    expect(
      (await suite.api.adapters.get({ id: ids[0]!, singularValues: 2 })).stats.singularValues[0]!.values,
    ).toHaveLength(2);
    expect((await failure(suite.api.adapters.get({ id: 'abc' }))).code).toBe('invalid_input');
  });

  it('adapters.merge: cat (exact, once per input), svd to a rank, the linear baseline', async () => {
    const c = await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] }).result;
    covered.add('adapters.merge');
    expect(c.created).toBe(true);
    expect(c.adapter).toMatchObject({
      rank: 8,
      lineage: [
        { id: ids[0], weight: 1 },
        { id: ids[1], weight: -0.5 },
      ],
      recipe: { kind: 'merge', method: 'cat' },
    });
    expect(await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] }).result).toEqual({
      ...c,
      created: false,
    });
    expect((await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'svd', rank: 3 }).result).adapter.rank).toBe(
      3,
    );
    expect((await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'linear' }).result).adapter.rank).toBe(4);
    const unequal = await failure(suite.api.adapters.merge({ ids: [ids[0]!, ids[2]!], method: 'linear' }).result);
    expect(unequal.message).toMatch(/rank is 2, linear merge needs every rank equal/);
    expect((await failure(suite.api.adapters.merge({ ids, method: 'svd' }).result)).message).toMatch(
      /svd needs a target rank/,
    );
    expect((await failure(suite.api.adapters.merge({ ids, method: 'cat', weights: [1] }).result)).code).toBe(
      'invalid_input',
    );
  });

  it('adapters.rename names an adapter and takes the name back; a merge is named from its parts', async () => {
    const merged = (await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] }).result)
      .adapter;
    expect(merged.name).toBe('imported PEFT adapter + imported PEFT adapter (cat)');
    const renamed = await suite.api.adapters.rename({ id: merged.id, name: '  review + pdf ' });
    covered.add('adapters.rename');
    expect(renamed).toMatchObject({ id: merged.id, key: merged.key, name: 'review + pdf' });
    expect((await suite.api.adapters.list({})).find((a) => a.id === merged.id)!.name).toBe('review + pdf');
    expect((await suite.api.adapters.rename({ id: merged.id, name: null })).name).toBeNull();
    const empty = await failure(suite.api.adapters.rename({ id: merged.id, name: '   ' }));
    expect(empty.code).toBe('invalid_input');
    expect(empty.message).toMatch(/give the adapter a name/);
    expect((await failure(suite.api.adapters.rename({ id: 'abcdef123456', name: 'x' }))).code).toBe('not_found');
    const named = await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'svd', rank: 1, name: 'small pair' })
      .result;
    expect(named.adapter.name).toBe('small pair');
  });

  it('adapters.mergePreview measures what adapters.merge would store, and stores nothing', async () => {
    const before = (await suite.api.adapters.list({})).length;
    const c = await suite.api.adapters.mergePreview({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] });
    covered.add('adapters.mergePreview');
    expect(c).toMatchObject({ method: 'cat', rank: 8, weights: [1, -0.5], energyKept: null });
    expect(c.sources.map((x) => [x.id, x.rank])).toEqual([
      [ids[0], 4],
      [ids[1], 4],
    ]);
    expect(c.error.overall).toBeLessThan(1e-5); // cat is the exact sum
    expect(c.norms.overall).toBeCloseTo(c.exactNorms.overall, 5);
    expect(c.norms.perTarget).toHaveLength(14);
    // The cat merge above was stored by the merge test: the preview names it.
    const stored = (await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] }).result)
      .adapter;
    expect(c.existing).toBe(stored.id);
    const s = await suite.api.adapters.mergePreview({ ids: ids.slice(0, 2), method: 'svd', rank: 2, weights: [1, 1] });
    expect(s.rank).toBe(2);
    expect(s.existing).toBeNull();
    const kept = s.energyKept!.overall!;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(1);
    expect(s.error.overall! ** 2 + kept).toBeCloseTo(1, 4); // what svd drops is the error
    const l = await suite.api.adapters.mergePreview({ ids: ids.slice(0, 2), method: 'linear' });
    const sim = await suite.api.adapters.similarity({ ids: ids.slice(0, 2) });
    expect('overall' in sim.linearVsCat && l.error.overall).toBeCloseTo(
      'overall' in sim.linearVsCat ? sim.linearVsCat.overall! : NaN,
      5,
    );
    expect((await suite.api.adapters.list({})).length).toBe(before);
    expect((await failure(suite.api.adapters.mergePreview({ ids, method: 'svd' }))).message).toMatch(
      /svd needs a target rank/,
    );
    const unequal = await failure(suite.api.adapters.mergePreview({ ids: [ids[0]!, ids[2]!], method: 'linear' }));
    expect(unequal.message).toMatch(/linear merge needs every rank equal/);
  });

  it("adapters.visualize: a cat merge's blocks by source, spectra before and after an svd truncation", async () => {
    const c = (await suite.api.adapters.merge({ ids: [ids[0]!, ids[2]!], method: 'cat', weights: [2, -1] }).result)
      .adapter;
    const v = await suite.api.adapters.visualize({ id: c.id });
    covered.add('adapters.visualize');
    expect(v.blocks).toEqual([
      { source: ids[0], weight: 2, offset: 0, rank: 4 },
      { source: ids[2], weight: -1, offset: 4, rank: 2 },
    ]);
    expect(v.rankSlots).toHaveLength(6);
    expect(v.truncation).toBeNull();
    expect(v.spectra[0]!.after).toBeNull();
    // The slots' squares add up to ‖ΔW‖² only when pieces are orthogonal; each is at most ‖ΔW‖.
    const norm = (await suite.api.adapters.get({ id: c.id })).stats.norms.overall;
    for (const x of v.rankSlots) expect(x).toBeLessThanOrEqual(norm);
    const s = (await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'svd', rank: 3 }).result).adapter;
    const sv = await suite.api.adapters.visualize({ id: s.id, singularValues: 6 });
    expect(sv.blocks).toEqual([]);
    expect(sv.truncation!.rank).toBe(3);
    for (const t of sv.spectra) {
      expect(t.before).toHaveLength(6);
      expect(t.after).toHaveLength(3);
      t.after!.forEach((x, i) => expect(x).toBeCloseTo(t.before[i]!, 3));
    }
    const kept = sv.truncation!.energyKept.overall!;
    expect(kept).toBeGreaterThan(0.3);
    expect(kept).toBeLessThan(1);
    const imported = await suite.api.adapters.visualize({ id: ids[0]! });
    expect(imported).toMatchObject({ blocks: [], truncation: null });
    expect(imported.spectra[0]!.before).toHaveLength(4);
    expect((await failure(suite.api.adapters.visualize({ id: 'ffffffffffff' }))).code).toBe('not_found');
  });

  it('adapters.export writes a PEFT folder equal to the stored adapter, with the sidecar', async () => {
    const c = (await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'cat', weights: [1, -0.5] }).result)
      .adapter;
    const out = join(suite.dataDir, 'exported');
    const r = await suite.api.adapters.export({ id: c.id, dir: out });
    covered.add('adapters.export');
    expect(r.files.sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'pskills.json']);
    const back = await readPeftDir(out);
    expect(back.adapter).toEqual(cat([made[0]!, made[1]!], [1, -0.5]));
    const sidecar = JSON.parse(readFileSync(join(out, 'pskills.json'), 'utf8')) as Record<string, unknown>;
    expect(sidecar).toMatchObject({
      adapter: c.key,
      skillSha256: null,
      bundle: { id: 'tiny-random', sha256: c.bundle.sha256 },
      recipe: c.recipe,
    });
    expect((await failure(suite.api.adapters.export({ id: 'ffffffffffff', dir: out }))).code).toBe('not_found');
  });

  it('adapters.similarity: cosine matrix and the linear baseline error', async () => {
    const r = await suite.api.adapters.similarity({ ids: ids.slice(0, 2) });
    covered.add('adapters.similarity');
    expect(r.cosine[0]![0]).toBeCloseTo(1, 6);
    expect(r.cosine[0]![1]).toBe(r.cosine[1]![0]);
    expect(Math.abs(r.cosine[0]![1]!)).toBeLessThan(0.5); // independent random adapters
    expect(r.perTarget).toHaveLength(14);
    expect('overall' in r.linearVsCat && r.linearVsCat.overall).toBeGreaterThan(0.1);
    expect(r).not.toHaveProperty('deprecated');
    const mixed = await suite.api.adapters.similarity({ ids: [ids[0]!, ids[2]!] });
    expect(mixed.linearVsCat).toEqual({ unavailable: expect.stringMatching(/equal ranks/) });
    const self = await suite.api.adapters.similarity({ ids: [ids[0]!, ids[0]!], weights: [1, 1] });
    expect('overall' in self.linearVsCat && self.linearVsCat.overall).toBeCloseTo(1, 5); // (2A)(2B) = 4AB vs 2AB
    expect((await failure(suite.api.adapters.similarity({ ids: [ids[0]!, ids[1]!], weights: [1] }))).code).toBe(
      'invalid_input',
    );
  });

  it('adapters.compare, the deprecated alias, gives the same result with a deprecation note', async () => {
    const input = { ids: [ids[0]!, ids[1]!], weights: [1, -0.5] };
    const { deprecated, ...rest } = await suite.api.adapters.compare(input);
    covered.add('adapters.compare');
    expect(deprecated).toBe(SIMILARITY_DEPRECATION);
    expect(deprecated).toMatch(/deprecated.*adapters\.similarity/);
    expect(rest).toEqual(await suite.api.adapters.similarity(input));
    expect((await failure(suite.api.adapters.compare({ ids: [ids[0]!] }))).code).toBe('invalid_input');
  });

  it('ema.update / ema.history / ema.rollback keep an append-only global history', async () => {
    expect((await suite.api.ema.history({})).versions).toEqual([]);
    covered.add('ema.history');
    const v1 = await suite.api.ema.update({ adapterId: ids[0]! });
    covered.add('ema.update');
    expect(v1.version).toMatchObject({ version: 1, kind: 'ema', beta: 1, parentVersion: null, rank: 4 });
    const v2 = await suite.api.ema.update({ adapterId: ids[1]!, beta: 0.25, rankBudget: 6 });
    expect(v2.version).toMatchObject({ version: 2, beta: 0.25, parentVersion: 1, rank: 6 });
    expect(v2.adapter.lineage).toEqual([
      { id: v1.adapter.id, weight: 0.75 },
      { id: ids[1], weight: 0.25 },
    ]);
    const merged = (await suite.api.adapters.get({ id: ids[1]! })).key;
    expect(v2.adapter.recipe).toEqual({ kind: 'ema', beta: 0.25, rankBudget: 6, sources: [v1.adapter.key, merged] });
    const v3 = await suite.api.ema.rollback({ version: 1 });
    covered.add('ema.rollback');
    expect(v3).toMatchObject({
      version: 3,
      kind: 'rollback',
      restoresVersion: 1,
      parentVersion: 2,
      adapter: v1.version.adapter,
    });
    const h = await suite.api.ema.history({});
    expect(h.bundle.id).toBe('tiny-random');
    expect(h.versions.map((v) => [v.version, v.adapter])).toEqual([
      [3, v1.version.adapter],
      [2, v2.version.adapter],
      [1, v1.version.adapter],
    ]);
    const ev = await suite.api.adapters.visualize({ id: v2.adapter.id });
    expect(ev.truncation!.rank).toBe(6);
    expect(ev.spectra[0]!.before).toHaveLength(8); // (1−β)·v1 (rank 4) + β·new (rank 4), before the budget of 6
    expect(ev.spectra[0]!.after).toHaveLength(6);
    expect((await failure(suite.api.ema.rollback({ version: 7 }))).code).toBe('not_found');
    expect((await failure(suite.api.ema.update({ adapterId: ids[0]!, beta: 2 }))).code).toBe('invalid_input');
  });

  it('adapters.delete refuses adapters named by a lineage or a global version', async () => {
    const linear = (await suite.api.adapters.merge({ ids: ids.slice(0, 2), method: 'linear' }).result).adapter;
    const inUse = await failure(suite.api.adapters.delete({ id: ids[1]! }));
    expect(inUse.code).toBe('conflict');
    expect(inUse.message).toMatch(/lineage/);
    expect(await suite.api.adapters.delete({ id: linear.id })).toEqual({ deleted: linear.key });
    covered.add('adapters.delete');
    expect((await suite.api.adapters.list({})).some((a) => a.id === linear.id)).toBe(false);
  });
});
