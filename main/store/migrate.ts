// Applies pending migrations, each in its own transaction together with its user_version bump,
// so a crash leaves the database at the last fully applied version.
import type { Database } from 'better-sqlite3';
import type { Migration } from './migrations';

export class SchemaError extends Error {
  override name = 'SchemaError';
}

export function schemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function checkOrder(list: readonly Migration[]): void {
  list.forEach((m, i) => {
    if (m.version !== i + 1) throw new SchemaError(`migration "${m.name}" has version ${m.version}, expected ${i + 1}`);
  });
}

/** Returns the versions it applied (empty when the database was already current). */
export function migrate(db: Database, list: readonly Migration[]): number[] {
  checkOrder(list);
  const latest = list.length;
  const current = schemaVersion(db);
  if (current > latest) {
    throw new SchemaError(`schema version ${current} is newer than this build supports (${latest}); update the app`);
  }
  const applied: number[] = [];
  for (const m of list.slice(current)) {
    try {
      // IMMEDIATE, and the version read again under the lock: another process may have applied it.
      const ran = db
        .transaction(() => {
          if (schemaVersion(db) >= m.version) return false;
          m.up(db);
          db.pragma(`user_version = ${m.version}`);
          return true;
        })
        .immediate();
      if (ran) applied.push(m.version);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new SchemaError(`migration ${m.version} ("${m.name}") failed: ${why}`, { cause: err });
    }
  }
  return applied;
}
