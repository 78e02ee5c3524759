// Adapters, the bundles they belong to, and the EMA global adapter's history (docs/store.md).
// An adapter is keyed by sha256(bundle sha, skill sha, recipe); inserting a key or tensor bytes the
// library already holds returns the existing row. Lineage is rows of adapter_parents, whose foreign
// keys refuse deleting a parent. Global versions are only ever appended.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { AdapterRecipe } from '../../common/api/adapter-schemas';
import { StudioError } from '../../common/errors';
import type { Adapter } from '../adapters/types';
import { adapterKey } from './adapter-key';
import { decodeAdapter, encodeAdapter, sha256Hex } from './adapter-tensors';
import { isReexport, modelIdentity, reexportIdentity } from './bundle-identity';
import { GlobalVersions, type GlobalRow } from './global-versions';

/** Tensors above this many bytes go to a file under the data dir instead of a BLOB. */
export const INLINE_LIMIT = 8 * 1024 * 1024;
const TENSORS_DIR = 'adapters';

export interface StoredAdapter {
  rowId: number;
  key: string;
  rank: number;
  alpha: number;
  recipe: AdapterRecipe;
  lineage: { rowId: number; key: string; weight: number }[];
  bundle: { rowId: number; id: string; sha256: string };
  skill: { name: string; version: number; sha256: string } | null;
  /** Size of the tensor bytes, recorded when the row was written (listing never stats a file). */
  bytes: number;
  tensorsSha256: string;
  storage: 'inline' | 'file';
  createdAt: string;
  /** The name a person gave it (null: named from its skill and tier). */
  name: string | null;
}

export interface NewAdapter {
  bundleId: number;
  skillVersionId?: number | null;
  adapter: Adapter;
  recipe: AdapterRecipe;
  lineage?: { rowId: number; weight: number }[];
  /** A merge's name (not part of the key: renaming never changes what the adapter is). */
  name?: string | null;
}

interface Row {
  id: number;
  key: string;
  rank: number;
  alpha: number;
  recipe: string;
  /** JSON [{id, key, weight}] in lineage order, built by SQLite from adapter_parents */
  parents: string;
  bundle_id: number;
  bundle_name: string;
  bundle_sha: string;
  skill_name: string | null;
  skill_n: number | null;
  skill_sha: string | null;
  tensors_bytes: number;
  tensors_path: string | null;
  tensors_sha256: string;
  created_at: string;
  name: string | null;
}

// One statement per lookup or listing, parents included: the subquery reads adapter_parents by its
// primary key (child_id, position), so a list of n adapters is one query, not one per parent.
const SELECT = `SELECT a.id, a.key, a.rank, a.alpha, a.recipe, a.bundle_id, json_extract(b.manifest, '$.id') AS bundle_name,
  b.sha256 AS bundle_sha, s.name AS skill_name, v.n AS skill_n, v.sha256 AS skill_sha, a.tensors_bytes,
  a.tensors_path, a.tensors_sha256, a.created_at, a.name,
  (SELECT json_group_array(json_object('id', p.parent_id, 'key', pa.key, 'weight', p.weight) ORDER BY p.position)
     FROM adapter_parents p JOIN adapters pa ON pa.id = p.parent_id WHERE p.child_id = a.id) AS parents
  FROM adapters a JOIN bundles b ON b.id = a.bundle_id
  LEFT JOIN skill_versions v ON v.id = a.skill_version_id LEFT JOIN skills s ON s.id = v.skill_id`;

/** SQLite's refusal by a foreign key: SQLITE_CONSTRAINT_FOREIGNKEY, or SQLITE_CONSTRAINT_TRIGGER for
 * ON DELETE RESTRICT (which SQLite runs as a trigger), both "FOREIGN KEY constraint failed". */
function isForeignKeyFailure(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    code.startsWith('SQLITE_CONSTRAINT') &&
    (err as Error).message === 'FOREIGN KEY constraint failed'
  );
}

function prepare(db: Database) {
  return {
    upsertBundle: db.prepare(
      `INSERT INTO bundles (sha256, manifest, path, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(sha256) DO UPDATE SET path = excluded.path RETURNING id`,
    ),
    byId: db.prepare(`${SELECT} WHERE a.id = ?`),
    byKey: db.prepare(`${SELECT} WHERE a.key = ?`),
    byPrefix: db.prepare(`${SELECT} WHERE a.key >= ? AND a.key <= ? LIMIT 2`),
    byBytes: db.prepare(`${SELECT} WHERE a.bundle_id = ? AND a.tensors_sha256 = ? AND a.skill_version_id IS ? LIMIT 1`),
    list: db.prepare(`${SELECT} ORDER BY a.id DESC`),
    keyOf: db.prepare('SELECT key FROM adapters WHERE id = ?'),
    rename: db.prepare('UPDATE adapters SET name = ? WHERE id = ?'),
    insert: db.prepare(
      `INSERT INTO adapters (skill_version_id, bundle_id, key, rank, alpha, recipe, tensors, tensors_path, tensors_sha256, tensors_bytes, created_at, name)
       VALUES (@skill, @bundle, @key, @rank, @alpha, @recipe, @tensors, @path, @sha, @bytes, @at, @name)`,
    ),
    insertParent: db.prepare('INSERT INTO adapter_parents (child_id, position, parent_id, weight) VALUES (?, ?, ?, ?)'),
    tensors: db.prepare('SELECT tensors, tensors_path, tensors_sha256 FROM adapters WHERE id = ?'),
    // Only after the foreign key refused a delete, to name the child (adapter_parents_parent index).
    childOf: db.prepare(
      'SELECT a.key FROM adapter_parents p JOIN adapters a ON a.id = p.child_id WHERE p.parent_id = ? LIMIT 1',
    ),
    usedByGlobal: db.prepare('SELECT n FROM global_adapter_versions WHERE adapter_id = ? LIMIT 1'),
    pathUsers: db.prepare('SELECT COUNT(*) AS c FROM adapters WHERE tensors_path = ?'),
    delete: db.prepare('DELETE FROM adapters WHERE id = ?'),
    skillSha: db.prepare('SELECT sha256 FROM skill_versions WHERE id = ?'),
    bundleSha: db.prepare('SELECT sha256 FROM bundles WHERE id = ?'),
    bundleBySha: db.prepare('SELECT id FROM bundles WHERE sha256 = ?'),
    allBundles: db.prepare('SELECT id, sha256, manifest FROM bundles ORDER BY id'),
    updateBundle: db.prepare('UPDATE bundles SET manifest = ?, path = ? WHERE id = ?'),
  };
}

export class AdaptersRepo {
  private readonly sql: ReturnType<typeof prepare>;
  private readonly globals: GlobalVersions;

  constructor(
    private readonly db: Database,
    /** Folder for file-backed tensors (the data dir); null keeps every adapter inline. */
    private readonly dataDir: string | null = null,
    private readonly opts: { inlineLimit?: number; clock?: () => Date } = {},
  ) {
    this.sql = prepare(db);
    this.globals = new GlobalVersions(db, () => this.now());
  }

  private now(): string {
    return (this.opts.clock ?? (() => new Date()))().toISOString();
  }

  /** Registers a bundle by its hash (the folder is updated to the latest one) and returns its row id. */
  ensureBundle(sha256: string, manifest: unknown, path: string): number {
    return (this.sql.upsertBundle.get(sha256, JSON.stringify(manifest), path, this.now()) as { id: number }).id;
  }

  /** As ensureBundle, and returns the identity adapters are keyed by. A bundle.json that differs from a
   * stored one only in encoder.onnx's entry is the same model (encoder.onnx's states must equal lm.onnx's,
   * docs/bundle-format.md), and so is a re-export of a stored one (`reexportIdentity`): it keeps that
   * row and its sha256, so its adapters, global adapter and runs stay usable, and the row takes the new
   * manifest and folder. */
  registerBundle(sha256: string, manifest: unknown, path: string): { id: number; sha256: string } {
    return this.db
      .transaction(() => {
        if (!this.sql.bundleBySha.get(sha256)) {
          const model = modelIdentity(manifest);
          const moved = isReexport(manifest) ? reexportIdentity(manifest) : null;
          const rows = this.sql.allBundles.all() as { id: number; sha256: string; manifest: string }[];
          const same = rows.find((r) => {
            const stored: unknown = JSON.parse(r.manifest);
            return modelIdentity(stored) === model || (moved !== null && reexportIdentity(stored) === moved);
          });
          if (same) {
            this.sql.updateBundle.run(JSON.stringify(manifest), path, same.id);
            return { id: same.id, sha256: same.sha256 };
          }
        }
        return { id: this.ensureBundle(sha256, manifest, path), sha256 };
      })
      .immediate();
  }

  /** A bundle row's stored bundle.json and the folder it was last loaded from (GGUF export reads both). */
  bundleRecord(bundleRowId: number): { manifest: unknown; path: string } | null {
    const r = this.db.prepare('SELECT manifest, path FROM bundles WHERE id = ?').get(bundleRowId) as
      { manifest: string; path: string } | undefined;
    return r ? { manifest: JSON.parse(r.manifest) as unknown, path: r.path } : null;
  }

  /** The folders bundles were loaded from, most recently registered first (the Models page's "loaded"). */
  bundlePaths(): string[] {
    const rows = this.db.prepare('SELECT path FROM bundles ORDER BY id DESC').all() as { path: string }[];
    return [...new Set(rows.map((r) => r.path))];
  }

  /** The key an adapter made from this input gets; look it up with `findByKey` before computing. */
  keyFor(bundleId: number, skillVersionId: number | null, recipe: AdapterRecipe): string {
    const bundle = this.sql.bundleSha.get(bundleId) as { sha256: string } | undefined;
    if (!bundle) throw new StudioError('not_found', `no bundle with row id ${bundleId}`);
    const skill =
      skillVersionId === null ? undefined : (this.sql.skillSha.get(skillVersionId) as { sha256: string } | undefined);
    if (skillVersionId !== null && !skill)
      throw new StudioError('not_found', `no skill version with row id ${skillVersionId}`);
    return adapterKey(bundle.sha256, skill?.sha256 ?? null, recipe);
  }

  /** Writes an adapter unless its key or its tensor bytes are already stored; one transaction. */
  insert(input: NewAdapter): { adapter: StoredAdapter; created: boolean } {
    const recipe = AdapterRecipe.parse(input.recipe);
    const skill = input.skillVersionId ?? null;
    const bytes = encodeAdapter(input.adapter);
    const sha = sha256Hex(bytes);
    return this.db
      .transaction(() => {
        const key = this.keyFor(input.bundleId, skill, recipe);
        const same = (this.sql.byKey.get(key) ?? this.sql.byBytes.get(input.bundleId, sha, skill)) as Row | undefined;
        if (same) return { adapter: this.toStored(same), created: false };
        for (const { rowId } of input.lineage ?? []) {
          if (!this.sql.keyOf.get(rowId))
            throw new StudioError('not_found', `lineage names adapter row ${rowId}, which does not exist`);
        }
        const path =
          this.dataDir && bytes.byteLength > (this.opts.inlineLimit ?? INLINE_LIMIT)
            ? this.writeFile(sha, bytes)
            : null;
        const { lastInsertRowid } = this.sql.insert.run({
          skill,
          bundle: input.bundleId,
          key,
          rank: input.adapter.rank,
          alpha: input.adapter.alpha,
          recipe: JSON.stringify(recipe),
          tensors: path ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          path,
          sha,
          bytes: bytes.byteLength,
          at: this.now(),
          name: input.name ?? null,
        });
        const rowId = Number(lastInsertRowid);
        (input.lineage ?? []).forEach((l, i) => this.sql.insertParent.run(rowId, i, l.rowId, l.weight));
        return { adapter: this.get(rowId)!, created: true };
      })
      .immediate();
  }

  /** Content-addressed, written to a temporary name and renamed: a crash leaves no half file. */
  private writeFile(sha: string, bytes: Uint8Array): string {
    const rel = `${TENSORS_DIR}/${sha}.safetensors`;
    const abs = join(this.dataDir!, rel);
    mkdirSync(join(this.dataDir!, TENSORS_DIR), { recursive: true });
    const tmp = `${abs}.tmp-${process.pid}`;
    writeFileSync(tmp, bytes);
    renameSync(tmp, abs);
    return rel;
  }

  /** Gives the adapter a name, or takes it back (null); one transaction. Its key never changes. */
  rename(rowId: number, name: string | null): StoredAdapter {
    return this.db
      .transaction(() => {
        if (this.sql.rename.run(name, rowId).changes === 0)
          throw new StudioError('not_found', `no adapter with row id ${rowId}`);
        return this.get(rowId)!;
      })
      .immediate();
  }

  get(rowId: number): StoredAdapter | null {
    const row = this.sql.byId.get(rowId) as Row | undefined;
    return row ? this.toStored(row) : null;
  }

  findByKey(key: string): StoredAdapter | null {
    const row = this.sql.byKey.get(key) as Row | undefined;
    return row ? this.toStored(row) : null;
  }

  /** By a key prefix of at least 6 hex digits; an ambiguous prefix is an error naming both. */
  resolve(prefix: string): StoredAdapter {
    const rows = this.sql.byPrefix.all(prefix, prefix.padEnd(64, 'f')) as Row[];
    if (rows.length === 0) throw new StudioError('not_found', `no adapter "${prefix}"`);
    if (rows.length > 1)
      throw new StudioError(
        'invalid_input',
        `adapter id "${prefix}" is ambiguous (${rows.map((r) => r.key.slice(0, 12)).join(', ')}…); give more digits`,
      );
    return this.toStored(rows[0]!);
  }

  list(): StoredAdapter[] {
    return (this.sql.list.all() as Row[]).map((r) => this.toStored(r));
  }

  /** The adapter's tensors, checked against the stored sha256. A missing file is reported here (not
   * by `list`, which never touches the files): `not_found` naming the adapter and the file. */
  load(rowId: number): Adapter {
    const row = this.sql.tensors.get(rowId) as
      { tensors: Buffer | null; tensors_path: string | null; tensors_sha256: string } | undefined;
    if (!row) throw new StudioError('not_found', `no adapter with row id ${rowId}`);
    const where = row.tensors_path ? join(this.dataDir ?? '.', row.tensors_path) : `adapter row ${rowId}`;
    const bytes = row.tensors ?? this.readFile(rowId, where);
    const got = sha256Hex(bytes);
    if (got !== row.tensors_sha256)
      throw new StudioError(
        'internal',
        `${where}: tensors have sha256 ${got}, the store expects ${row.tensors_sha256}`,
      );
    return decodeAdapter(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), where);
  }

  private readFile(rowId: number, file: string): Buffer {
    try {
      return readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const key = (this.sql.keyOf.get(rowId) as { key: string }).key.slice(0, 12);
      throw new StudioError(
        'not_found',
        `adapter ${key}: its tensor file ${file} is missing (removed outside the studio?); restore the file, or delete the adapter`,
        { file },
      );
    }
  }

  /**
   * Refused while another adapter's lineage or a global version names it: the foreign keys of
   * adapter_parents (ON DELETE RESTRICT) and global_adapter_versions make SQLite refuse the DELETE,
   * and only then is the referrer looked up (by index) to name it.
   */
  delete(rowId: number): void {
    const path = this.db
      .transaction(() => {
        const row = this.get(rowId);
        if (!row) throw new StudioError('not_found', `no adapter with row id ${rowId}`);
        const file = (this.sql.tensors.get(rowId) as { tensors_path: string | null }).tensors_path;
        try {
          this.sql.delete.run(rowId);
        } catch (err) {
          if (isForeignKeyFailure(err)) throw this.inUse(row);
          throw err;
        }
        return file && (this.sql.pathUsers.get(file) as { c: number }).c === 0 ? file : null;
      })
      .immediate();
    if (path && this.dataDir) rmSync(join(this.dataDir, path), { force: true });
  }

  /** The conflict for a delete the foreign keys refused, naming what refers to the adapter. */
  private inUse(row: StoredAdapter): StudioError {
    const id = row.key.slice(0, 12);
    const child = this.sql.childOf.get(row.rowId) as { key: string } | undefined;
    if (child)
      return new StudioError(
        'conflict',
        `adapter ${id} is in the lineage of adapter ${child.key.slice(0, 12)}; delete that one first`,
      );
    const global = this.sql.usedByGlobal.get(row.rowId) as { n: number } | undefined;
    if (global)
      return new StudioError('conflict', `adapter ${id} is global adapter version ${global.n}; history is kept`);
    return new StudioError('conflict', `adapter ${id} is still referred to by another row; it was not deleted`);
  }

  globalHead(bundleId: number): GlobalRow | null {
    return this.globals.head(bundleId);
  }

  globalHistory(bundleId: number): GlobalRow[] {
    return this.globals.history(bundleId);
  }

  /**
   * Stores an EMA result and appends it as the next global version, in one transaction. `parentN`
   * is the head the result was computed from; if another step landed first this is a conflict.
   */
  appendEma(
    bundleId: number,
    input: NewAdapter,
    beta: number,
    parentN: number | null,
  ): { version: GlobalRow; adapter: StoredAdapter } {
    return this.db
      .transaction(() => {
        this.globals.checkHead(bundleId, parentN);
        const { adapter } = this.insert(input);
        return { version: this.globals.append(bundleId, adapter.rowId, 'ema', beta, parentN, null), adapter };
      })
      .immediate();
  }

  /** Appends a version that brings back version n's adapter; earlier versions stay as they were. */
  rollback(bundleId: number, n: number): GlobalRow {
    return this.db
      .transaction(() => {
        const target = this.globals.at(bundleId, n);
        if (!target) throw new StudioError('not_found', `no global adapter version ${n} for this bundle`);
        const head = this.globals.head(bundleId)!;
        if (head.n === n) throw new StudioError('invalid_input', `version ${n} is already the current global adapter`);
        // β = 1: the rolled-back ΔW_g replaces the current one entirely.
        return this.globals.append(bundleId, target.adapterRowId, 'rollback', 1, head.n, n);
      })
      .immediate();
  }

  private toStored(r: Row): StoredAdapter {
    const where = `adapter ${r.key.slice(0, 12)}`;
    const recipe = AdapterRecipe.safeParse(JSON.parse(r.recipe));
    if (!recipe.success)
      throw new StudioError('internal', `${where}: stored recipe does not parse: ${recipe.error.issues[0]?.message}`);
    const lineage = (JSON.parse(r.parents) as { id: number; key: string; weight: number }[]).map((l) => ({
      rowId: l.id,
      key: l.key,
      weight: l.weight,
    }));
    return {
      rowId: r.id,
      key: r.key,
      rank: r.rank,
      alpha: r.alpha,
      recipe: recipe.data,
      lineage,
      bundle: { rowId: r.bundle_id, id: r.bundle_name, sha256: r.bundle_sha },
      skill: r.skill_name === null ? null : { name: r.skill_name, version: r.skill_n!, sha256: r.skill_sha! },
      bytes: r.tensors_bytes,
      tensorsSha256: r.tensors_sha256,
      storage: r.tensors_path ? 'file' : 'inline',
      createdAt: r.created_at,
      name: r.name ?? null,
    };
  }
}
