// The EMA global adapter's timeline, one per bundle: versions are only ever appended (an EMA step, or a
// rollback that brings back an earlier version's adapter), each naming the head it was computed from.
import type { Database } from 'better-sqlite3';
import { StudioError } from '../../common/errors';

/** Where a global version came from: a lesson merged in, an adopted run's global adapter, or a person. */
export type GlobalSource = 'lesson' | 'run' | 'manual';

export interface GlobalRow {
  n: number;
  adapterRowId: number;
  adapterKey: string;
  adapterTensorsSha256: string;
  rank: number;
  kind: 'ema' | 'rollback';
  beta: number;
  parentN: number | null;
  restoresN: number | null;
  createdAt: string;
  /** lesson, run or manual: see GLOBAL_SOURCE */
  source: GlobalSource;
}

// Where a version came from (docs/store.md, "global_adapter_versions"), read from what is stored, no
// column of its own: the adapter an EMA step merged in (its recipe's sources[1]) is a lesson when it
// was adopted as one or compiled from a lesson-<world> skill (a continual run's loop), a run when it is
// an adopted run's global adapter, and manual otherwise (the update form, the API, a rollback, and
// every version from before adoptions existed).
const GLOBAL_SOURCE = `CASE WHEN g.kind = 'rollback' THEN 'manual' ELSE COALESCE(
    (SELECT CASE WHEN ad.kind = 'global' THEN 'run' ELSE 'lesson' END
       FROM adapters m JOIN adoptions ad ON ad.adapter_id = m.id
       WHERE m.bundle_id = g.bundle_id AND m.key = json_extract(a.recipe, '$.sources[1]') LIMIT 1),
    (SELECT 'lesson' FROM adapters m JOIN skill_versions mv ON mv.id = m.skill_version_id JOIN skills ms ON ms.id = mv.skill_id
       WHERE m.bundle_id = g.bundle_id AND m.key = json_extract(a.recipe, '$.sources[1]') AND ms.name LIKE 'lesson-%' LIMIT 1),
    'manual') END`;

const GLOBAL_SELECT = `SELECT g.n, g.adapter_id, a.key AS adapter_key, a.tensors_sha256 AS adapter_sha, a.rank, g.kind, g.beta, p.n AS parent_n, r.n AS restores_n, g.created_at,
  ${GLOBAL_SOURCE} AS source
  FROM global_adapter_versions g JOIN adapters a ON a.id = g.adapter_id
  LEFT JOIN global_adapter_versions p ON p.id = g.parent_id LEFT JOIN global_adapter_versions r ON r.id = g.restores_id`;

interface GRow {
  n: number;
  adapter_id: number;
  adapter_key: string;
  adapter_sha: string;
  rank: number;
  kind: 'ema' | 'rollback';
  beta: number;
  parent_n: number | null;
  restores_n: number | null;
  created_at: string;
  source: GlobalSource;
}

const toGlobal = (r: GRow): GlobalRow => ({
  n: r.n,
  adapterRowId: r.adapter_id,
  adapterKey: r.adapter_key,
  adapterTensorsSha256: r.adapter_sha,
  rank: r.rank,
  kind: r.kind,
  beta: r.beta,
  parentN: r.parent_n,
  restoresN: r.restores_n,
  createdAt: r.created_at,
  source: r.source,
});

function statements(db: Database) {
  return {
    head: db.prepare(`${GLOBAL_SELECT} WHERE g.bundle_id = ? ORDER BY g.n DESC LIMIT 1`),
    at: db.prepare(`${GLOBAL_SELECT} WHERE g.bundle_id = ? AND g.n = ?`),
    history: db.prepare(`${GLOBAL_SELECT} WHERE g.bundle_id = ? ORDER BY g.n DESC`),
    rowId: db.prepare('SELECT id FROM global_adapter_versions WHERE bundle_id = ? AND n = ?'),
    insert: db.prepare(
      `INSERT INTO global_adapter_versions (bundle_id, n, adapter_id, kind, beta, parent_id, restores_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}

export class GlobalVersions {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    db: Database,
    private readonly now: () => string,
  ) {
    this.sql = statements(db);
  }

  head(bundleId: number): GlobalRow | null {
    const r = this.sql.head.get(bundleId) as GRow | undefined;
    return r ? toGlobal(r) : null;
  }

  at(bundleId: number, n: number): GlobalRow | null {
    const r = this.sql.at.get(bundleId, n) as GRow | undefined;
    return r ? toGlobal(r) : null;
  }

  history(bundleId: number): GlobalRow[] {
    return (this.sql.history.all(bundleId) as GRow[]).map(toGlobal);
  }

  /** A conflict unless the head is still `parentN`, the version the caller computed its step from. */
  checkHead(bundleId: number, parentN: number | null): void {
    const head = this.head(bundleId)?.n ?? null;
    if (head !== parentN)
      throw new StudioError(
        'conflict',
        `global adapter moved to version ${head} while this step was computed from ${parentN ?? 'none'}; retry`,
      );
  }

  append(
    bundleId: number,
    adapterRowId: number,
    kind: 'ema' | 'rollback',
    beta: number,
    parentN: number | null,
    restoresN: number | null,
  ): GlobalRow {
    const rowOf = (n: number | null) => (n === null ? null : (this.sql.rowId.get(bundleId, n) as { id: number }).id);
    const n = (parentN ?? 0) + 1;
    this.sql.insert.run(bundleId, n, adapterRowId, kind, beta, rowOf(parentN), rowOf(restoresN), this.now());
    return this.at(bundleId, n)!;
  }
}
