// Skills and their versions. A version is immutable; saving content that differs from the latest
// version appends version n+1 whose parent is the previous latest, identical content appends nothing.
import { createHash } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import type { Provenance, SkillSummary, SkipRecord, VersionMeta } from '../../common/api/skill-schemas';
import { StudioError } from '../../common/errors';
import { packageOf, provenanceFromJson, provenanceToJson } from './provenance-json';
import type { NewVersion } from './types';

export interface StoredSkill {
  name: string;
  description: string; // of this version
  package: string | null;
  version: VersionMeta;
  content: string;
}

export interface SaveResult {
  version: VersionMeta;
  created: boolean;
}

export interface ImportBatchOptions {
  skipped?: SkipRecord[];
  startedAt?: Date; // when the whole import began (fetch, scan, parse); defaults to now
  /** Called after each version is written, inside the transaction; throwing rolls the batch back. */
  onProgress?: (done: number, total: number) => void;
}

export interface ImportBatchResult {
  imported: number;
  unchanged: number;
  runId: number;
  /** Each version written or found as it was, in order: what the Import dialog lists. */
  skills: { name: string; version: number; created: boolean }[];
}

interface VersionRow {
  name: string;
  n: number;
  sha256: string;
  parent_n: number | null;
  provenance: string;
  created_at: string;
}
interface DetailRow extends VersionRow {
  description: string;
  content: string;
  package: string | null;
}
interface LatestRow extends VersionRow {
  id: number;
}
interface SummaryRow {
  name: string;
  description: string;
  package: string | null;
  versions: number;
  latest: number;
  updated_at: string;
}

interface WriteInput {
  name: string;
  description: string;
  content: string;
  bodyHash: string;
  package: string | null | undefined; // undefined keeps the skill's current package
  provenance: Provenance;
}

const VERSION_COLUMNS = `s.name, v.n, v.sha256, p.n AS parent_n, v.provenance, v.created_at`;
const VERSION_FROM = `skills s JOIN skill_versions v ON v.skill_id = s.id LEFT JOIN skill_versions p ON p.id = v.parent_id`;

// SQLite's lower() folds ASCII only; search should also match "É" with "é".
const FOLD = 'pskills_fold';

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function toMeta(row: VersionRow): VersionMeta {
  return {
    version: row.n,
    sha256: row.sha256,
    parentVersion: row.parent_n,
    provenance: provenanceFromJson(row.provenance, `skill "${row.name}" version ${row.n}`),
    createdAt: row.created_at,
  };
}

export class SkillsRepo {
  private readonly sql: {
    skillByName: Statement<[string], { id: number; package: string | null }>;
    latest: Statement<[number], LatestRow>;
    insertSkill: Statement<[string, string, string | null, string, string]>;
    insertVersion: Statement<[number, number, string, string, string, string, number | null, string, string]>;
    touchSkill: Statement<[string, string | null, string, number]>;
    getLatest: Statement<[string], DetailRow>;
    getVersion: Statement<[string, number], DetailRow>;
    history: Statement<[string], VersionRow>;
    list: Statement<{ query: string | null; package: string | null }, SummaryRow>;
    packages: Statement<[], { package: string; skills: number }>;
    hasBodyHash: Statement<[string], { one: number }>;
    bodyElsewhere: Statement<[string, string], { one: number }>;
    count: Statement<[], { n: number }>;
    insertRun: Statement<[string, string, string, number, number, string]>;
    adaptersOf: Statement<[number], { key: string; n: number }>;
    trajectoriesOf: Statement<[number], { n: number }>;
    versionCount: Statement<[number], { n: number }>;
    deleteSkill: Statement<[number]>;
  };

  constructor(
    private readonly db: Database,
    private readonly clock: () => Date = () => new Date(),
  ) {
    db.function(FOLD, { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
    this.sql = {
      skillByName: db.prepare('SELECT id, package FROM skills WHERE name = ?'),
      latest: db.prepare(
        `SELECT v.id, ${VERSION_COLUMNS} FROM ${VERSION_FROM} WHERE v.skill_id = ? ORDER BY v.n DESC LIMIT 1`,
      ),
      insertSkill: db.prepare(
        'INSERT INTO skills (name, description, package, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      ),
      insertVersion: db.prepare(
        `INSERT INTO skill_versions (skill_id, n, description, content, sha256, body_hash, parent_id, provenance, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      touchSkill: db.prepare('UPDATE skills SET description = ?, package = ?, updated_at = ? WHERE id = ?'),
      getLatest: db.prepare(
        `SELECT ${VERSION_COLUMNS}, v.description, v.content, s.package FROM ${VERSION_FROM}
         WHERE s.name = ? ORDER BY v.n DESC LIMIT 1`,
      ),
      getVersion: db.prepare(
        `SELECT ${VERSION_COLUMNS}, v.description, v.content, s.package FROM ${VERSION_FROM}
         WHERE s.name = ? AND v.n = ?`,
      ),
      history: db.prepare(`SELECT ${VERSION_COLUMNS} FROM ${VERSION_FROM} WHERE s.name = ? ORDER BY v.n DESC`),
      // Description lives on skills (copied from the newest version) so listing never reads content.
      list: db.prepare(
        `SELECT s.name, s.description, s.package, s.updated_at, COUNT(v.id) AS versions, MAX(v.n) AS latest
         FROM skills s JOIN skill_versions v ON v.skill_id = s.id
         WHERE (@package IS NULL OR s.package = @package)
           AND (@query IS NULL
                OR instr(${FOLD}(s.name), @query) > 0
                OR instr(${FOLD}(s.description), @query) > 0
                OR instr(${FOLD}(coalesce(s.package, '')), @query) > 0)
         GROUP BY s.id ORDER BY s.name`,
      ),
      packages: db.prepare(
        'SELECT package, COUNT(*) AS skills FROM skills WHERE package IS NOT NULL GROUP BY package ORDER BY package',
      ),
      hasBodyHash: db.prepare('SELECT 1 AS one FROM skill_versions WHERE body_hash = ? LIMIT 1'),
      bodyElsewhere: db.prepare(
        'SELECT 1 AS one FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE v.body_hash = ? AND s.name <> ? LIMIT 1',
      ),
      count: db.prepare('SELECT COUNT(*) AS n FROM skills'),
      insertRun: db.prepare(
        `INSERT INTO import_runs (source, started_at, finished_at, imported, unchanged, skipped)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      // adapters_skill_version and trajectories_skill_version make these lookups by index.
      adaptersOf: db.prepare(
        `SELECT a.key, v.n FROM skill_versions v JOIN adapters a ON a.skill_version_id = v.id
         WHERE v.skill_id = ? ORDER BY v.n, a.id`,
      ),
      trajectoriesOf: db.prepare(
        'SELECT COUNT(*) AS n FROM skill_versions v JOIN trajectories t ON t.skill_version_id = v.id WHERE v.skill_id = ?',
      ),
      versionCount: db.prepare('SELECT COUNT(*) AS n FROM skill_versions WHERE skill_id = ?'),
      deleteSkill: db.prepare('DELETE FROM skills WHERE id = ?'), // its versions go with it (ON DELETE CASCADE)
    };
  }

  list(filter: { query?: string; package?: string } = {}): SkillSummary[] {
    const query = filter.query?.trim().toLowerCase() || null;
    return this.sql.list.all({ query, package: filter.package ?? null }).map((r) => ({
      name: r.name,
      description: r.description,
      package: r.package,
      versions: r.versions,
      latestVersion: r.latest,
      updatedAt: r.updated_at,
    }));
  }

  packages(): { package: string; skills: number }[] {
    return this.sql.packages.all();
  }

  /** The latest version, or version n when given; null when the skill or that version does not exist. */
  get(name: string, version?: number): StoredSkill | null {
    const row = version === undefined ? this.sql.getLatest.get(name) : this.sql.getVersion.get(name, version);
    if (!row) return null;
    return {
      name: row.name,
      description: row.description,
      package: row.package,
      version: toMeta(row),
      content: row.content,
    };
  }

  /** The row id of version n (the latest when absent), for rows that reference a version; null if none. */
  versionRowId(name: string, version?: number): number | null {
    const row = this.db
      .prepare<[string, number | null, number | null], { id: number }>(
        'SELECT v.id FROM skill_versions v JOIN skills s ON s.id = v.skill_id WHERE s.name = ? AND (? IS NULL OR v.n = ?) ORDER BY v.n DESC LIMIT 1',
      )
      .get(name, version ?? null, version ?? null);
    return row?.id ?? null;
  }

  /** Newest first; empty when the skill does not exist. */
  history(name: string): VersionMeta[] {
    return this.sql.history.all(name).map(toMeta);
  }

  save(name: string, content: string, description: string, provenance: Provenance, bodyHash: string): SaveResult {
    const now = this.clock().toISOString();
    const pkg = packageOf(provenance);
    // IMMEDIATE everywhere: see docs/store.md ("Writers").
    return this.db
      .transaction(() => this.write({ name, description, content, bodyHash, provenance, package: pkg }, now))
      .immediate();
  }

  /**
   * Version 1 of a new skill. Refused (`conflict`, nothing written) when a skill of that name exists:
   * the check and the write share one transaction, so two creates of one name cannot both succeed.
   */
  create(name: string, content: string, description: string, provenance: Provenance, bodyHash: string): SaveResult {
    const now = this.clock().toISOString();
    return this.db
      .transaction(() => {
        if (this.sql.skillByName.get(name)) {
          throw new StudioError(
            'conflict',
            `a skill named "${name}" already exists (nothing was written); choose another name`,
            { name },
          );
        }
        return this.write(
          { name, description, content, bodyHash, provenance, package: packageOf(provenance) ?? null },
          now,
        );
      })
      .immediate();
  }

  /** Whether a skill other than `name` holds this normalized body (duplicate detection). */
  hasBodyElsewhere(hash: string, name: string): boolean {
    return this.sql.bodyElsewhere.get(hash, name) !== undefined;
  }

  hasBodyHash(hash: string): boolean {
    return this.sql.hasBodyHash.get(hash) !== undefined;
  }

  /** All versions and the import_runs row are written in one transaction: all of it or none of it. */
  importBatch(source: string, versions: readonly NewVersion[], options: ImportBatchOptions = {}): ImportBatchResult {
    const startedAt = (options.startedAt ?? this.clock()).toISOString();
    return this.db
      .transaction(() => {
        const now = this.clock().toISOString();
        let imported = 0;
        let unchanged = 0;
        const skills: ImportBatchResult['skills'] = [];
        versions.forEach((v, i) => {
          const { created, version } = this.write(v, now);
          skills.push({ name: v.name, version: version.version, created });
          if (created) imported++;
          else unchanged++;
          options.onProgress?.(i + 1, versions.length);
        });
        const finishedAt = this.clock().toISOString();
        const skipped = JSON.stringify(options.skipped ?? []);
        const run = this.sql.insertRun.run(source, startedAt, finishedAt, imported, unchanged, skipped);
        return { imported, unchanged, runId: Number(run.lastInsertRowid), skills };
      })
      .immediate();
  }

  count(): number {
    return this.sql.count.get()?.n ?? 0;
  }

  /**
   * Deletes the skill and every version of it in one transaction; returns how many versions went.
   * Refused (`conflict`, nothing deleted) while an adapter compiled from one of its versions or a
   * recorded trajectory refers to a version: those rows would lose the text they were made from.
   * `details.adapters` lists the adapters ({id, version}), newest version last.
   */
  delete(name: string): number {
    return this.db
      .transaction(() => {
        const skill = this.sql.skillByName.get(name);
        if (!skill) throw new StudioError('not_found', `no skill "${name}"`);
        const adapters = this.sql.adaptersOf.all(skill.id).map((a) => ({ id: a.key.slice(0, 12), version: a.n }));
        if (adapters.length) {
          const listed =
            adapters
              .slice(0, 5)
              .map((a) => `${a.id} (v${a.version})`)
              .join(', ') + (adapters.length > 5 ? ', …' : '');
          const count = adapters.length === 1 ? 'an adapter was' : `${adapters.length} adapters were`;
          throw new StudioError(
            'conflict',
            `skill "${name}" was not deleted: ${count} compiled from it (${listed}); delete ${adapters.length === 1 ? 'it' : 'them'} on the Adapters page first`,
            { adapters },
          );
        }
        const trajectories = this.sql.trajectoriesOf.get(skill.id)?.n ?? 0;
        if (trajectories) {
          const what =
            trajectories === 1 ? '1 recorded trajectory refers' : `${trajectories} recorded trajectories refer`;
          throw new StudioError('conflict', `skill "${name}" was not deleted: ${what} to its versions`, {
            trajectories,
          });
        }
        const versions = this.sql.versionCount.get(skill.id)?.n ?? 0;
        this.sql.deleteSkill.run(skill.id);
        return versions;
      })
      .immediate();
  }

  // Callers hold a transaction: the version row and the skill row change together.
  private write(input: WriteInput, now: string): SaveResult {
    const hash = sha256(input.content);
    const provenanceJson = provenanceToJson(input.provenance, `skill "${input.name}"`);
    const skill = this.sql.skillByName.get(input.name);
    const latest = skill ? this.sql.latest.get(skill.id) : undefined;
    if (latest && latest.sha256 === hash) return { version: toMeta(latest), created: false };

    const pkg = input.package === undefined ? (skill?.package ?? null) : input.package;
    let skillId: number;
    if (skill) {
      skillId = skill.id;
      this.sql.touchSkill.run(input.description, pkg, now, skillId);
    } else {
      skillId = Number(this.sql.insertSkill.run(input.name, input.description, pkg, now, now).lastInsertRowid);
    }
    const n = latest ? latest.n + 1 : 1;
    this.sql.insertVersion.run(
      skillId,
      n,
      input.description,
      input.content,
      hash,
      input.bodyHash,
      latest?.id ?? null,
      provenanceJson,
      now,
    );
    return {
      version: {
        version: n,
        sha256: hash,
        parentVersion: latest?.n ?? null,
        provenance: provenanceFromJson(provenanceJson, `skill "${input.name}" version ${n}`),
        createdAt: now,
      },
      created: true,
    };
  }
}
