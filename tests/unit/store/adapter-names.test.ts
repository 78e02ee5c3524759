// Adapter names (docs/store.md, migration 7): an existing library migrates with every adapter unnamed
// and still listed, named from its skill and tier; a rename is one UPDATE that leaves the key, bytes
// and lineage alone; a merge is named from its parts unless given a name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AdapterRecipe } from '../../../common/api/adapter-schemas';
import { adapterName, adapterTitle, mergeName } from '../../../common/adapters/name';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { AdaptersRepo } from '../../../main/store/adapters-repo';
import { openDatabase } from '../../../main/store/db';
import { migrate } from '../../../main/store/migrate';
import { SCHEMA_VERSION, migrations } from '../../../main/store/migrations';
import { randomAdapter } from '../adapters/builders';

const SHA = 'a'.repeat(64);
const importRecipe = (seed: number): { adapter: ReturnType<typeof randomAdapter>; recipe: AdapterRecipe } => {
  const adapter = randomAdapter({ seed });
  return { adapter, recipe: { kind: 'import', tensorsSha256: sha256Hex(encodeAdapter(adapter)) } };
};

describe('adapter names', () => {
  it('an unnamed library migrates: every adapter stays, unnamed, named from its tier', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pskills-names-'));
    try {
      const file = join(dir, 'studio.db');
      const raw = new BetterSqlite3(file);
      const before = migrations.findIndex((m) => m.name === 'adapter names');
      expect(before).toBeGreaterThan(0);
      migrate(raw, migrations.slice(0, before));
      raw
        .prepare(
          `INSERT INTO bundles (sha256, manifest, path, created_at) VALUES (?, '{"id":"tiny"}', '/b', '2026-01-01')`,
        )
        .run(SHA);
      const { adapter, recipe } = importRecipe(1);
      const bytes = Buffer.from(encodeAdapter(adapter));
      raw
        .prepare(
          `INSERT INTO adapters (bundle_id, key, rank, alpha, recipe, tensors, tensors_sha256, tensors_bytes, created_at)
           VALUES (1, ?, ?, ?, ?, ?, ?, ?, '2026-01-02T00:00:00Z')`,
        )
        .run(
          'b'.repeat(64),
          adapter.rank,
          adapter.alpha,
          JSON.stringify(recipe),
          bytes,
          sha256Hex(bytes),
          bytes.length,
        );
      raw.close();

      const db = openDatabase(file);
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const repo = new AdaptersRepo(db);
      const [old] = repo.list();
      expect(old!.name).toBeNull();
      expect(adapterName(old!)).toBe('imported PEFT adapter');
      expect(adapterTitle(old!, new Date('2026-06-01'))).toBe('imported PEFT adapter · 2 Jan');
      expect(adapterTitle(old!, new Date('2027-06-01'))).toBe('imported PEFT adapter · 2 Jan 2026');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rename sets and clears the name in one statement; key, bytes and lineage stay', () => {
    const db = openDatabase(':memory:');
    const repo = new AdaptersRepo(db);
    const bundle = repo.ensureBundle(SHA, { id: 'tiny' }, '/bundles/tiny');
    const a = repo.insert({ bundleId: bundle, ...importRecipe(1) }).adapter;
    const b = repo.insert({ bundleId: bundle, ...importRecipe(2) }).adapter;
    const merged = repo.insert({
      bundleId: bundle,
      adapter: randomAdapter({ seed: 3, rank: 8 }),
      recipe: { kind: 'merge', method: 'cat', weights: [1, 1], rank: null, sources: [a.key, b.key] },
      lineage: [
        { rowId: a.rowId, weight: 1 },
        { rowId: b.rowId, weight: 1 },
      ],
      name: mergeName([a, b], 'cat'),
    }).adapter;
    expect(merged.name).toBe('imported PEFT adapter + imported PEFT adapter (cat)');

    const renamed = repo.rename(merged.rowId, 'review + pdf');
    expect(renamed).toMatchObject({ name: 'review + pdf', key: merged.key, tensorsSha256: merged.tensorsSha256 });
    expect(renamed.lineage).toEqual(merged.lineage);
    expect(adapterName(renamed)).toBe('review + pdf');
    expect(repo.rename(merged.rowId, null).name).toBeNull();
    expect(adapterName(repo.get(merged.rowId)!)).toBe('cat merge of 2');
    expect(() => repo.rename(9999, 'x')).toThrow(/no adapter/);
    // SQLite refuses what the API would: an empty or over-long name.
    expect(() => db.prepare('UPDATE adapters SET name = ? WHERE id = ?').run('', a.rowId)).toThrow(/CHECK/);
    db.close();
  });

  it('names compiled and distilled adapters by skill@version and tier; merges by their parts', () => {
    const skill = { name: 'pdf', version: 2 };
    expect(
      adapterName({ name: null, skill, recipe: { kind: 'instant', hypernet: 'perceiver', combine: 'mean' } }),
    ).toBe('pdf@2 · instant');
    const part = { name: null, skill, recipe: { kind: 'instant' } as AdapterRecipe };
    expect(mergeName([part, { ...part, name: 'mine' }], 'svd')).toBe('pdf@2 + mine (svd)');
    expect(
      mergeName(
        Array.from({ length: 40 }, () => part),
        'cat',
      ).length,
    ).toBeLessThanOrEqual(120);
  });
});
