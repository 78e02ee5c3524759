// Rank caps on merges (docs/api.md "Rank caps"): a cat merge's rank is the sum of its sources', so 64
// copies of a rank-768 merge asked for rank 49,152 and grew the process past 8 GB before it was
// killed. A merge is now capped by the maxMergeRank setting (default 512) and by the model's smallest
// target (the fixture bundle's k projection: min(64, 32) = 32), refused over it with the numbers, or
// truncated to the cap by svd when the request says overRank: 'svd'. Over both transports and the CLI.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { failure, studioSuite, transports, withStudio } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const work = mkdtempSync(join(tmpdir(), 'pskills-rank-cap-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(transports)('merge rank caps over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-rank-cap-data-', { defaultBundleDir: FIXTURE_BUNDLE });
  const ids: string[] = [];

  beforeAll(async () => {
    for (const seed of [1, 2, 3]) {
      const dir = join(s.dataDir, `peft-${seed}`);
      await writeFixturePeft(dir, seed); // rank 4
      ids.push((await s.api.adapters.import({ dir })).adapter.id);
    }
  });

  it('64 copies of a rank-16 merge (rank 1,024) are refused at once, naming the model’s cap', async () => {
    const m16 = (await s.api.adapters.merge({ ids: [ids[0]!, ids[1]!, ids[2]!, ids[0]!], method: 'cat' }).result)
      .adapter;
    expect(m16.rank).toBe(16);
    const t0 = performance.now();
    const err = await failure(s.api.adapters.merge({ ids: Array(64).fill(m16.id), method: 'cat' }).result);
    const ms = performance.now() - t0;
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(
      /^rank: this merge asks for rank 1,024 \(a cat merge of 64 adapters: the sum of their ranks\), over the cap of 32 set by the model's smallest target \(0\.k: min\(d_in 64, d_out 32\)\); ask overRank: 'svd'/,
    );
    console.log(`${transport.name}: 64 × rank 16 refused in ${ms.toFixed(0)} ms`);
    const preview = await failure(s.api.adapters.mergePreview({ ids: Array(64).fill(m16.id), method: 'cat' }));
    expect(preview.message).toMatch(/asks for rank 1,024/);
    const svd = await failure(s.api.adapters.merge({ ids, method: 'svd', rank: 40 }).result);
    expect(svd.message).toMatch(/asks for rank 40 \(the svd target rank\), over the cap of 32/);
  });

  it('the maxMergeRank setting caps it too; overRank svd truncates to the cap', async () => {
    await s.api.settings.set({ maxMergeRank: 8 });
    try {
      const err = await failure(s.api.adapters.merge({ ids, method: 'cat' }).result);
      expect(err.message).toMatch(/asks for rank 12 .*over the cap of 8 set by the maxMergeRank setting/);
      const cut = await s.api.adapters.merge({ ids, method: 'cat', overRank: 'svd' }).result;
      expect(cut.adapter.rank).toBe(8);
      const detail = await s.api.adapters.get({ id: cut.adapter.id });
      expect(detail.recipe).toMatchObject({ kind: 'merge', method: 'svd', rank: 8 });
      const preview = await s.api.adapters.mergePreview({ ids, method: 'cat', overRank: 'svd' });
      expect([preview.method, preview.rank]).toEqual(['svd', 8]);
      expect((await s.api.adapters.merge({ ids: [ids[0]!, ids[1]!], method: 'cat' }).result).adapter.rank).toBe(8);
    } finally {
      await s.api.settings.set({ maxMergeRank: 512 });
    }
    expect((await failure(s.api.settings.set({ maxMergeRank: 0 }))).message).toMatch(/maxMergeRank/);
  });
});

describe('pskills merge over the cap', () => {
  it('exits 2 with the numbers; --over-rank svd truncates', async () => {
    const dataDir = mkdtempSync(join(work, 'cli-'));
    const ids = await withStudio(
      async ({ api }) => {
        const out: string[] = [];
        for (const seed of [1, 2]) {
          const dir = join(work, `cli-peft-${seed}`);
          await writeFixturePeft(dir, seed);
          out.push((await api.adapters.import({ dir })).adapter.id);
        }
        return out;
      },
      { dataDir, defaultBundleDir: FIXTURE_BUNDLE },
    );
    const run = (...args: string[]) =>
      spawnSync(
        '/usr/bin/time',
        ['-f', 'maxrss_kb=%M', process.execPath, BIN, 'merge', ...args, '--data-dir', dataDir],
        { encoding: 'utf8', timeout: 120_000 },
      );
    const many = Array(16).fill(ids[0]!) as string[];
    const r = run(...many, '--method', 'cat');
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/asks for rank 64 .*over the cap of 32/);
    console.log(
      `pskills merge of 16 × rank 4: refused, peak RSS ${Number(/maxrss_kb=(\d+)/.exec(r.stderr)?.[1]) >> 10} MiB`,
    );
    const ok = run(...many, '--method', 'cat', '--over-rank', 'svd');
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/\(rank 32\)/);
  });
});
