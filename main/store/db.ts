// Opens the studio database with the settings every caller needs, then brings its schema up to date.
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { migrate } from './migrate';
import { migrations } from './migrations';

export type { Database } from 'better-sqlite3';

export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
  constructor(
    readonly file: string,
    why: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open database ${file}: ${why}`, options);
  }
}

function configure(db: Database, inMemory: boolean): void {
  if (!inMemory) {
    // WAL: readers never block the writer, and a killed process leaves committed data intact.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`journal_mode is "${String(mode)}", WAL could not be enabled`);
  }
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // NORMAL is durable against process crashes in WAL mode; only an OS crash can drop the last commits.
  db.pragma('synchronous = NORMAL');
}

export function openDatabase(file: string): Database {
  const inMemory = file === ':memory:';
  let db: Database;
  try {
    // Under Electron the native module must match its ABI: npm start builds a copy for it.
    const nativeBinding = process.env.PSKILLS_SQLITE_BINDING;
    db = nativeBinding ? new BetterSqlite3(file, { nativeBinding }) : new BetterSqlite3(file);
  } catch (err) {
    throw new DatabaseOpenError(file, err instanceof Error ? err.message : String(err), { cause: err });
  }
  try {
    // The first read is where SQLite notices a file that is not a database.
    db.pragma('schema_version', { simple: true });
    configure(db, inMemory);
    migrate(db, migrations);
    return db;
  } catch (err) {
    db.close();
    throw new DatabaseOpenError(file, err instanceof Error ? err.message : String(err), { cause: err });
  }
}
