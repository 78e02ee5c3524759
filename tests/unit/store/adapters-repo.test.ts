import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdapterRecipe } from '../../../common/api/adapter-schemas';
import type { Adapter } from '../../../main/adapters/types';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { adapterKey, canonicalJson } from '../../../main/store/adapter-key';
import { AdaptersRepo, type NewAdapter } from '../../../main/store/adapters-repo';
import { openDatabase, type Database } from '../../../main/store/db';
import { migrate } from '../../../main/store/migrate';
import { SCHEMA_VERSION, migrations } from '../../../main/store/migrations';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { randomAdapter } from '../adapters/builders';
import { skillText } from './builders';

let db: Database;
let repo: AdaptersRepo;
let bundle: number;
const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new AdaptersRepo(db);
  bundle = repo.ensureBundle(SHA_A, { id: 'tiny' }, '/bundles/tiny');
});
afterEach(() => db.close());

const importRecipe = (a: Adapter): AdapterRecipe => ({ kind: 'import', tensorsSha256: sha256Hex(encodeAdapter(a)) });
const imported = (seed: number, over: Partial<NewAdapter> = {}) => {
  const adapter = randomAdapter({ seed });
  return repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter), ...over }).adapter;
};
const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
const emaInput = (seed: number, sources: [string | null, string]): NewAdapter => ({
  bundleId: bundle,
  adapter: randomAdapter({ seed, rank: 2 }),
  recipe: { kind: 'ema', beta: 0.5, rankBudget: 2, sources },
});

describe('keys', () => {
  it('hash the same input to the same key whatever the key order, and differ with any part', () => {
    const r1: AdapterRecipe = { kind: 'merge', method: 'cat', weights: [1, 2], rank: null, sources: [SHA_A, SHA_B] };
    const r2 = JSON.parse(
      '{"sources":["' + SHA_A + '","' + SHA_B + '"],"rank":null,"weights":[1,2],"method":"cat","kind":"merge"}',
    ) as AdapterRecipe;
    expect(canonicalJson(r2)).toBe(canonicalJson(r1));
    expect(adapterKey(SHA_A, null, r2)).toBe(adapterKey(SHA_A, null, r1));
    expect(adapterKey(SHA_B, null, r1)).not.toBe(adapterKey(SHA_A, null, r1));
    expect(adapterKey(SHA_A, SHA_B, r1)).not.toBe(adapterKey(SHA_A, null, r1));
    expect(adapterKey(SHA_A, null, { ...r1, weights: [1, 3] })).not.toBe(adapterKey(SHA_A, null, r1));
  });
});

describe('insert / get / list', () => {
  it('stores tensors that load back bit for bit, with rank, alpha, recipe and bundle', () => {
    const adapter = randomAdapter({ seed: 1, rank: 3, alpha: 5.5 });
    const { adapter: row, created } = repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter) });
    expect(created).toBe(true);
    expect(row).toMatchObject({
      rank: 3,
      alpha: 5.5,
      storage: 'inline',
      bundle: { id: 'tiny', sha256: SHA_A },
      skill: null,
      lineage: [],
    });
    expect(row.key).toBe(repo.keyFor(bundle, null, importRecipe(adapter)));
    expect(row.bytes).toBe(encodeAdapter(adapter).byteLength);
    expect(repo.load(row.rowId)).toEqual(adapter);
    expect(repo.list().map((a) => a.key)).toEqual([row.key]);
  });

  it('returns the existing row for the same key and for the same bytes under another recipe', () => {
    const adapter = randomAdapter({ seed: 2 });
    const first = repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter) });
    const again = repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter) });
    const sameBytes = repo.insert({
      bundleId: bundle,
      adapter,
      recipe: { kind: 'merge', method: 'cat', weights: [1], rank: null, sources: [first.adapter.key] },
    });
    expect([again.created, sameBytes.created]).toEqual([false, false]);
    expect(again.adapter.rowId).toBe(first.adapter.rowId);
    expect(sameBytes.adapter.rowId).toBe(first.adapter.rowId);
    expect(count('adapters')).toBe(1);
  });

  it('keeps equal bytes of another bundle as a separate adapter', () => {
    const adapter = randomAdapter({ seed: 2 });
    const a = repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter) }).adapter;
    const other = repo.ensureBundle(SHA_B, { id: 'other' }, '/bundles/other');
    const b = repo.insert({ bundleId: other, adapter, recipe: importRecipe(adapter) });
    expect(b.created).toBe(true);
    expect(b.adapter.key).not.toBe(a.key);
    expect(b.adapter.tensorsSha256).toBe(a.tensorsSha256);
  });

  it('ties an adapter to a skill version, whose hash is part of the key', () => {
    const skills = new SkillsRepo(db);
    const { version } = skills.save('pdf', skillText('pdf', 'Read PDFs'), 'Read PDFs', { kind: 'manual' }, 'b1');
    const svId = (db.prepare('SELECT id FROM skill_versions WHERE sha256 = ?').get(version.sha256) as { id: number })
      .id;
    const adapter = randomAdapter({ seed: 3 });
    const row = repo.insert({ bundleId: bundle, skillVersionId: svId, adapter, recipe: importRecipe(adapter) }).adapter;
    expect(row.skill).toEqual({ name: 'pdf', version: 1, sha256: version.sha256 });
    expect(row.key).toBe(adapterKey(SHA_A, version.sha256, importRecipe(adapter)));
  });

  it('ensureBundle is idempotent and follows the bundle to its latest folder', () => {
    expect(repo.ensureBundle(SHA_A, { id: 'tiny' }, '/moved')).toBe(bundle);
    expect(db.prepare('SELECT path FROM bundles WHERE id = ?').pluck().get(bundle)).toBe('/moved');
    expect(count('bundles')).toBe(1);
  });

  it('registerBundle keeps the identity of a stored bundle.json that differs only in encoder.onnx', () => {
    const files = (encoder: string, lm = 'l1') => ({
      'lm.onnx': { sha256: lm, bytes: 9 },
      'encoder.onnx': { sha256: encoder, bytes: 5 },
    });
    const first = repo.registerBundle(SHA_B, { id: 'm', files: files('e1') }, '/v1');
    expect(first).toEqual({ id: expect.any(Number) as number, sha256: SHA_B });
    // the same model with its encoder graph rewritten (it now reads lm.onnx's weights): same row, same key
    const shaC = 'c'.repeat(64);
    expect(repo.registerBundle(shaC, { id: 'm', files: files('e2') }, '/v2')).toEqual(first);
    expect(db.prepare('SELECT path FROM bundles WHERE id = ?').pluck().get(first.id)).toBe('/v2');
    expect(repo.registerBundle(SHA_B, { id: 'm', files: files('e1') }, '/v1').id).toBe(first.id);
    // another lm.onnx is another model
    const shaD = 'd'.repeat(64);
    expect(repo.registerBundle(shaD, { id: 'm', files: files('e2', 'l2') }, '/v3')).toEqual({
      id: expect.any(Number) as number,
      sha256: shaD,
    });
    expect(count('bundles')).toBe(3);
  });

  it('registerBundle keeps the identity when train-step graphs are added to a stored bundle', () => {
    const base = { id: 't', files: { 'lm.onnx': { sha256: 'l1', bytes: 9 } } };
    const first = repo.registerBundle('e'.repeat(64), base, '/t1');
    const withStep = {
      ...base,
      files: { ...base.files, 'train_step-8x64.onnx': { sha256: 's', bytes: 4 } },
      train_step: { rank: 8, buckets: [{ batch: 8, length: 64, file: 'train_step-8x64.onnx' }] },
    };
    expect(repo.registerBundle('f'.repeat(64), withStep, '/t2')).toEqual(first);
  });

  it('registerBundle keeps the identity when the distil recipe is written into a stored bundle.json', () => {
    const base = { id: 'r', files: { 'lm.onnx': { sha256: 'l1', bytes: 9 } } };
    const first = repo.registerBundle('b1'.repeat(32), base, '/r1');
    const recipe = { steps: 40, lr: 0.003, batch: 8, top_k: 16, max_answer: 48 };
    expect(repo.registerBundle('b2'.repeat(32), { ...base, distill: recipe }, '/r2')).toEqual(first);
  });

  it("registerBundle keeps the identity when the card's data sets are recorded after the run", () => {
    const base = { id: 'p', files: { 'lm.onnx': { sha256: 'l1', bytes: 9 } }, training_card: { steps: 5 } };
    const first = repo.registerBundle('a1'.repeat(32), base, '/p1');
    const sets = [{ kind: 'skillworld', split: 'train', seed: 0, used_by: ['base'] }];
    const recorded = { ...base, training_card: { steps: 5, data_sets: sets, data_sets_note: 'after the run' } };
    expect(repo.registerBundle('a2'.repeat(32), recorded, '/p2')).toEqual(first);
    // anything else in the card is still another model
    const other = { ...recorded, training_card: { ...recorded.training_card, steps: 6 } };
    expect(repo.registerBundle('a3'.repeat(32), other, '/p3').id).not.toBe(first.id);
  });

  it('registerBundle keeps the identity across a re-export that says so, and only then', () => {
    const v1 = {
      format: 'pskills.bundle/1',
      id: 'm',
      files: { 'lm.onnx': { sha256: 'l1', bytes: 9 }, 'hypernet.onnx': { sha256: 'h', bytes: 3 } },
      lora: { targets: [{ module: 'q' }] },
      io: { lm: { inputs: ['lora.{i}.{module}.A'] } },
      training_card: { steps: 5 },
    };
    const first = repo.registerBundle(SHA_B, v1, '/v1');
    const v2 = {
      ...v1,
      format: 'pskills.bundle/2',
      files: { ...v1.files, 'lm.onnx': { sha256: 'l2', bytes: 7 } },
      lora: { ...v1.lora, groups: [{ name: 'qkv' }] },
      io: { lm: { inputs: ['lora.{i}.{group}.A'] } },
    };
    // without the note new graph files are another model
    expect(repo.registerBundle('c'.repeat(64), v2, '/v2').id).not.toBe(first.id);
    const note = { ...v2, training_card: { steps: 5, reexport: { of: SHA_B, logits_max_abs_diff: 0 } } };
    expect(repo.registerBundle('d'.repeat(64), note, '/v3')).toEqual(first);
    // the note does not cover other weights (here the hypernetwork)
    const other = { ...note, files: { ...note.files, 'hypernet.onnx': { sha256: 'h2', bytes: 3 } } };
    expect(repo.registerBundle('e'.repeat(64), other, '/v4').id).not.toBe(first.id);
  });

  it('refuses an invalid adapter and unknown lineage, writing nothing', () => {
    const adapter = randomAdapter({ seed: 4 });
    const bad = {
      ...adapter,
      targets: new Map([...adapter.targets].map(([k, p]) => [k, { ...p, A: p.A.map(() => NaN) }])),
    };
    expect(() => repo.insert({ bundleId: bundle, adapter: bad, recipe: importRecipe(adapter) })).toThrow(/finite/);
    expect(() =>
      repo.insert({ bundleId: bundle, adapter, recipe: importRecipe(adapter), lineage: [{ rowId: 99, weight: 1 }] }),
    ).toThrow(/row 99/);
    expect(count('adapters')).toBe(0);
  });
});

describe('resolve', () => {
  it('finds an adapter by any unique key prefix and names the candidates of an ambiguous one', () => {
    const a = imported(5);
    const b = imported(6);
    expect(repo.resolve(a.key).rowId).toBe(a.rowId);
    expect(repo.resolve(b.key.slice(0, 12)).rowId).toBe(b.rowId);
    const missing = ['000000', '777777', 'ffffff'].find((p) => ![a, b].some((x) => x.key.startsWith(p)))!;
    expect(() => repo.resolve(missing)).toThrow(/no adapter/);
    db.prepare(`UPDATE adapters SET key = 'abcdef' || substr(key, 7)`).run();
    expect(() => repo.resolve('abcdef')).toThrow(/ambiguous/);
  });
});

describe('lineage and deletion', () => {
  it('lists parents with weights and refuses to delete an adapter a merge was made from', () => {
    const a = imported(7);
    const b = imported(8);
    const merged = repo.insert({
      bundleId: bundle,
      adapter: randomAdapter({ seed: 9, rank: 8 }),
      recipe: { kind: 'merge', method: 'cat', weights: [1, -0.5], rank: null, sources: [a.key, b.key] },
      lineage: [
        { rowId: a.rowId, weight: 1 },
        { rowId: b.rowId, weight: -0.5 },
      ],
    }).adapter;
    expect(merged.lineage).toEqual([
      { rowId: a.rowId, key: a.key, weight: 1 },
      { rowId: b.rowId, key: b.key, weight: -0.5 },
    ]);
    expect(() => repo.delete(a.rowId)).toThrow(/in the lineage of adapter/);
    expect(count('adapter_parents')).toBe(2);
    repo.delete(merged.rowId);
    expect(count('adapter_parents')).toBe(0); // the child's rows go with it (ON DELETE CASCADE)
    repo.delete(a.rowId);
    expect(repo.list().map((x) => x.key)).toEqual([b.key]);
    expect(() => repo.delete(a.rowId)).toThrow(/no adapter/);
  });

  it('keeps the order and repeats of a lineage, and the foreign key itself refuses deleting a parent', () => {
    const a = imported(30);
    const b = imported(31);
    const lineage = [
      { rowId: b.rowId, weight: 0.1 + 0.2 },
      { rowId: a.rowId, weight: 1 },
      { rowId: b.rowId, weight: -1 / 3 },
    ];
    const m = repo.insert({
      bundleId: bundle,
      adapter: randomAdapter({ seed: 32 }),
      recipe: importRecipe(randomAdapter({ seed: 32 })),
      lineage,
    }).adapter;
    expect(m.lineage).toEqual(lineage.map((l) => ({ ...l, key: l.rowId === a.rowId ? a.key : b.key })));
    expect(repo.list().find((x) => x.rowId === m.rowId)!.lineage).toEqual(m.lineage);
    // Not a check in the repository: SQLite refuses the row's deletion outright.
    expect(() => db.prepare('DELETE FROM adapters WHERE id = ?').run(b.rowId)).toThrow(/FOREIGN KEY constraint failed/);
    const err = (() => {
      try {
        repo.delete(b.rowId);
      } catch (e) {
        return e as { code: string; message: string };
      }
    })();
    expect(err).toMatchObject({
      code: 'conflict',
      message: `adapter ${b.key.slice(0, 12)} is in the lineage of adapter ${m.key.slice(0, 12)}; delete that one first`,
    });
    expect(count('adapters')).toBe(3);
  });

  it('refuses to delete an adapter that is a global version', () => {
    const a = imported(10);
    repo.appendEma(bundle, emaInput(11, [null, a.key]), 1, null);
    const g = repo.globalHead(bundle)!;
    expect(() => repo.delete(g.adapterRowId)).toThrow(/global adapter version 1/);
  });
});

describe('file-backed tensors', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pskills-adapters-'));
    repo = new AdaptersRepo(db, dataDir, { inlineLimit: 0 });
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('go to adapters/<sha256>.safetensors, are checked on load and removed with the last row', () => {
    const row = imported(12);
    const file = join(dataDir, 'adapters', `${row.tensorsSha256}.safetensors`);
    expect(row.storage).toBe('file');
    expect(existsSync(file)).toBe(true);
    expect(row.bytes).toBeGreaterThan(0);
    expect(repo.load(row.rowId)).toEqual(randomAdapter({ seed: 12 }));
    writeFileSync(file, Buffer.from('tampered'));
    expect(() => repo.load(row.rowId)).toThrow(/sha256/);
    repo.delete(row.rowId);
    expect(existsSync(file)).toBe(false);
  });

  it('are listed with the size recorded at insert, without reading the file; a missing file is reported on load', () => {
    const row = imported(13);
    const file = join(dataDir, 'adapters', `${row.tensorsSha256}.safetensors`);
    const size = encodeAdapter(randomAdapter({ seed: 13 })).byteLength;
    expect(row.bytes).toBe(size);
    unlinkSync(file);
    expect(repo.list().map((a) => [a.key, a.bytes])).toEqual([[row.key, size]]);
    expect(() => repo.load(row.rowId)).toThrow(
      new RegExp(`adapter ${row.key.slice(0, 12)}: its tensor file .*${row.tensorsSha256}\\.safetensors is missing`),
    );
  });
});

describe('global adapter versions', () => {
  it('append with their parent, and a stale parent is a conflict that writes nothing', () => {
    const v1 = repo.appendEma(bundle, emaInput(20, [null, SHA_A]), 1, null);
    const v2 = repo.appendEma(bundle, emaInput(21, [v1.adapter.key, SHA_B]), 0.25, 1);
    expect(v1.version).toMatchObject({ n: 1, kind: 'ema', beta: 1, parentN: null, restoresN: null, rank: 2 });
    expect(v2.version).toMatchObject({ n: 2, beta: 0.25, parentN: 1, adapterKey: v2.adapter.key });
    const before = count('adapters');
    expect(() => repo.appendEma(bundle, emaInput(22, [v1.adapter.key, SHA_B]), 0.5, 1)).toThrow(/moved to version 2/);
    expect(count('adapters')).toBe(before);
    expect(repo.globalHistory(bundle).map((g) => g.n)).toEqual([2, 1]);
  });

  it('roll back by appending a version with the old adapter; history is append-only', () => {
    const v1 = repo.appendEma(bundle, emaInput(23, [null, SHA_A]), 1, null);
    repo.appendEma(bundle, emaInput(24, [v1.adapter.key, SHA_B]), 0.5, 1);
    const v3 = repo.rollback(bundle, 1);
    expect(v3).toMatchObject({
      n: 3,
      kind: 'rollback',
      beta: 1,
      parentN: 2,
      restoresN: 1,
      adapterRowId: v1.adapter.rowId,
    });
    expect(repo.globalHistory(bundle).map((g) => [g.n, g.kind])).toEqual([
      [3, 'rollback'],
      [2, 'ema'],
      [1, 'ema'],
    ]);
    expect(() => repo.rollback(bundle, 3)).toThrow(/already the current/);
    expect(() => repo.rollback(bundle, 9)).toThrow(/no global adapter version 9/);
    expect(() => db.prepare('UPDATE global_adapter_versions SET beta = 0').run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM global_adapter_versions').run()).toThrow(/append-only/);
  });

  it('are counted per bundle', () => {
    repo.appendEma(bundle, emaInput(25, [null, SHA_A]), 1, null);
    const other = repo.ensureBundle(SHA_B, { id: 'other' }, '/other');
    const o1 = repo.appendEma(other, { ...emaInput(26, [null, SHA_B]), bundleId: other }, 1, null);
    expect(o1.version.n).toBe(1);
    expect(repo.globalHead(bundle)!.n).toBe(1);
    expect(repo.globalHistory(other)).toHaveLength(1);
  });
});

describe('migration 3', () => {
  const tensorsPath = (sha: string) => `adapters/${sha}.safetensors`;
  const recipe = (sha: string) => JSON.stringify({ kind: 'import', tensorsSha256: sha });
  const shaOf = (n: number) => n.toString(16).padStart(64, '0');

  /** A studio.db as version 2 left it: JSON lineage lists, inline and file-backed tensors. */
  function version2Library(dir: string): string {
    const file = join(dir, 'studio.db');
    const raw = new BetterSqlite3(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('foreign_keys = ON');
    migrate(raw, migrations.slice(0, 2));
    raw
      .prepare(`INSERT INTO bundles (id, sha256, manifest, path, created_at) VALUES (1, ?, '{"id":"tiny"}', '/b', 't')`)
      .run(SHA_A);
    const add = raw.prepare(
      `INSERT INTO adapters (id, bundle_id, key, rank, alpha, recipe, lineage, tensors, tensors_path, tensors_sha256, created_at)
       VALUES (@id, 1, @key, 1, 1, @recipe, @lineage, @tensors, @path, @sha, 't')`,
    );
    const row = (id: number, lineage: unknown[], file?: 'file' | 'missing') => {
      const sha = shaOf(id);
      if (file === 'file') {
        mkdirSync(join(dir, 'adapters'), { recursive: true });
        writeFileSync(join(dir, tensorsPath(sha)), Buffer.alloc(1000 + id));
      }
      add.run({
        id,
        key: shaOf(100 + id),
        recipe: recipe(sha),
        lineage: JSON.stringify(lineage),
        tensors: file ? null : Buffer.alloc(10 + id),
        path: file ? tensorsPath(sha) : null,
        sha,
      });
    };
    row(1, []);
    row(2, [], 'file');
    row(
      3,
      [
        { id: 1, weight: 1 },
        { id: 2, weight: -0.5 },
      ],
      'missing',
    ); // a merge whose file is gone
    row(4, [
      { id: 3, weight: 0.75 },
      { id: 1, weight: 0.25 },
    ]);
    // Entries the version 2 build could not list: a deleted parent, no weight, not an object.
    row(5, [{ id: 99, weight: 1 }, { id: 2, weight: 0.1 + 0.2 }, { id: 1 }, 7, { id: 4, weight: 2 }]);
    raw.close();
    return file;
  }

  it('moves JSON lineage into adapter_parents and tensor sizes into the row, in the migration transaction', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pskills-migrate3-'));
    try {
      const file = version2Library(dir);
      const opened = openDatabase(file); // runs migration 3 and later ones (BEGIN IMMEDIATE, like every migration)
      expect(opened.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(
        (opened.prepare(`SELECT name FROM pragma_table_info('adapters')`).pluck().all() as string[]).includes(
          'lineage',
        ),
      ).toBe(false);
      expect(
        opened
          .prepare('SELECT child_id, position, parent_id, weight FROM adapter_parents ORDER BY child_id, position')
          .all(),
      ).toEqual([
        { child_id: 3, position: 0, parent_id: 1, weight: 1 },
        { child_id: 3, position: 1, parent_id: 2, weight: -0.5 },
        { child_id: 4, position: 0, parent_id: 3, weight: 0.75 },
        { child_id: 4, position: 1, parent_id: 1, weight: 0.25 },
        { child_id: 5, position: 1, parent_id: 2, weight: 0.1 + 0.2 },
        { child_id: 5, position: 4, parent_id: 4, weight: 2 },
      ]);
      expect(opened.prepare('SELECT id, tensors_bytes FROM adapters ORDER BY id').all()).toEqual([
        { id: 1, tensors_bytes: 11 },
        { id: 2, tensors_bytes: 1002 }, // the file's size
        { id: 3, tensors_bytes: 0 }, // missing file: 0, as the old listing reported
        { id: 4, tensors_bytes: 14 },
        { id: 5, tensors_bytes: 15 },
      ]);
      const migrated = new AdaptersRepo(opened, dir);
      const list = migrated.list();
      expect(list.map((a) => [a.rowId, a.lineage.map((l) => [l.rowId, l.key, l.weight])])).toEqual([
        [
          5,
          [
            [2, shaOf(102), 0.1 + 0.2],
            [4, shaOf(104), 2],
          ],
        ],
        [
          4,
          [
            [3, shaOf(103), 0.75],
            [1, shaOf(101), 0.25],
          ],
        ],
        [
          3,
          [
            [1, shaOf(101), 1],
            [2, shaOf(102), -0.5],
          ],
        ],
        [2, []],
        [1, []],
      ]);
      // The foreign keys now guard the old rows: parents cannot go, children can.
      expect(() => migrated.delete(1)).toThrow(`adapter ${shaOf(101).slice(0, 12)} is in the lineage of adapter`);
      expect(() => migrated.delete(4)).toThrow(/in the lineage of adapter/);
      migrated.delete(5);
      migrated.delete(4);
      expect(opened.prepare('SELECT child_id FROM adapter_parents ORDER BY child_id').pluck().all()).toEqual([3, 3]);
      opened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves the file at version 2 when it fails part-way', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pskills-migrate3-'));
    try {
      const file = version2Library(dir);
      const raw = new BetterSqlite3(file);
      raw.pragma('foreign_keys = ON');
      const broken = migrations.map((m) =>
        m.version === 3 ? { ...m, up: (d: Database) => (m.up(d), d.exec('SELECT no_such_function()')) } : m,
      );
      expect(() => migrate(raw, broken)).toThrow(/migration 3/);
      expect(raw.pragma('user_version', { simple: true })).toBe(2);
      expect(raw.prepare(`SELECT name FROM sqlite_master WHERE name = 'adapter_parents'`).all()).toEqual([]);
      expect(raw.prepare('SELECT lineage FROM adapters WHERE id = 4').pluck().get() as string).toBe(
        '[{"id":3,"weight":0.75},{"id":1,"weight":0.25}]',
      );
      raw.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migration 2', () => {
  it('carries version 1 global rows over as EMA steps of their adapter bundle', () => {
    const raw = new BetterSqlite3(':memory:');
    raw.pragma('foreign_keys = ON');
    migrate(raw, migrations.slice(0, 1));
    raw
      .prepare(`INSERT INTO bundles (id, sha256, manifest, path, created_at) VALUES (7, ?, '{"id":"x"}', '/x', 't')`)
      .run(SHA_A);
    raw
      .prepare(
        `INSERT INTO adapters (id, bundle_id, key, rank, alpha, recipe, tensors, tensors_sha256, created_at) VALUES (3, 7, ?, 1, 1, '{}', x'00', ?, 't')`,
      )
      .run(SHA_B, SHA_B);
    raw
      .prepare(
        `INSERT INTO global_adapter_versions (id, n, adapter_id, beta, parent_id, created_at) VALUES (1, 1, 3, 1, NULL, 't'), (2, 2, 3, 0.5, 1, 't')`,
      )
      .run();
    migrate(raw, migrations);
    expect(
      raw.prepare('SELECT id, bundle_id, n, kind, beta, parent_id FROM global_adapter_versions ORDER BY id').all(),
    ).toEqual([
      { id: 1, bundle_id: 7, n: 1, kind: 'ema', beta: 1, parent_id: null },
      { id: 2, bundle_id: 7, n: 2, kind: 'ema', beta: 0.5, parent_id: 1 },
    ]);
    raw.close();
  });
});
