// Opens the studio database with the settings every caller needs, then brings its schema up to date.
// An existing file is checked read-only first and refused, untouched, when damaged; only a missing
// file becomes a new library, and it is built aside and linked into place whole.
import { randomBytes } from 'node:crypto';
import { constants, copyFileSync, linkSync, lstatSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { specialKind } from '../files/read-gate';
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

const BUSY_MS = 5000;

function connect(file: string, options: BetterSqlite3.Options = {}): Database {
  // Under Electron the native module must match its ABI: npm start builds a copy for it.
  const nativeBinding = process.env.PSKILLS_SQLITE_BINDING;
  const db = new BetterSqlite3(file, nativeBinding ? { ...options, nativeBinding } : options);
  // First, so every later statement (the WAL switch and migrations included) waits for a lock.
  db.pragma(`busy_timeout = ${BUSY_MS}`);
  return db;
}

function configure(db: Database, inMemory: boolean): void {
  if (!inMemory) {
    // WAL: readers never block the writer, and a killed process leaves committed data intact.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`journal_mode is "${String(mode)}", WAL could not be enabled`);
  }
  db.pragma('foreign_keys = ON');
  // NORMAL is durable against process crashes in WAL mode; only an OS crash can drop the last commits.
  db.pragma('synchronous = NORMAL');
}

export function openDatabase(file: string): Database {
  const inMemory = file === ':memory:';
  if (!inMemory) ensureIntactOrCreate(file);
  let db: Database;
  try {
    db = connect(file);
  } catch (err) {
    throw new DatabaseOpenError(file, errText(err), { cause: err });
  }
  try {
    configure(db, inMemory);
    migrate(db, migrations);
    return db;
  } catch (err) {
    db.close();
    throw new DatabaseOpenError(file, errText(err), { cause: err });
  }
}

const NOT_A_DATABASE = 'file is not a database';

/** What to tell a user whose library is damaged. */
export const DAMAGED_ADVICE = 'Restore it from a backup, or move it aside to start a new library';
const ADVICE = `nothing was written to it. ${DAMAGED_ADVICE}`;

/**
 * Why `file` (which exists) cannot be a library, before SQLite opens it, or null: a FIFO would block
 * the open for good, and an empty file or /dev/zero reads as a new, empty database, which SQLite
 * would call intact. Ours never leaves an empty file (see createNew).
 */
export function notALibraryFile(file: string): string | null {
  let info;
  try {
    info = statSync(file); // follows a link; a stat never blocks on a FIFO
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') return 'a symbolic link loop (ELOOP); not opened';
    throw err;
  }
  const special = specialKind(info);
  const link = lstatSync(file).isSymbolicLink() ? ` (symbolic link to ${realpathSync(file)})` : '';
  if (special) return `not a regular file (${special}${link}); not opened`;
  if (info.size === 0) return `it is empty (0 bytes${link}), so it is not a library this app wrote`;
  for (const suffix of COMPANIONS) {
    const odd = companionProblem(`${file}${suffix}`);
    if (odd) return odd;
  }
  return null;
}

/** SQLite's files beside the database: it opens the journal to look for a hot one (a FIFO there blocked
 *  every open for good), and the WAL and shared-memory index in WAL mode. */
const COMPANIONS = ['-journal', '-wal', '-shm'];

function companionProblem(path: string): string | null {
  let info;
  try {
    info = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? null : `${basename(path)}: not readable (${code ?? 'unknown'}); not opened`;
  }
  const special = specialKind(info);
  return special ? `${basename(path)}: not a regular file (${special}); not opened` : null;
}

function ensureIntactOrCreate(file: string): void {
  let odd: string | null;
  try {
    odd = notALibraryFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new DatabaseOpenError(file, errText(err), { cause: err });
    return createNew(file);
  }
  if (odd) throw new DatabaseOpenError(file, `${odd}; ${ADVICE}`);
  const why = checkReadOnly(file);
  if (why) throw new DatabaseOpenError(file, `${why}; ${ADVICE}`);
}

/** Null when the file passes PRAGMA integrity_check on a read-only connection, else what is wrong.
 *  integrity_check, not quick_check: only it compares every index with its table, and a damaged
 *  UNIQUE index lets a second row with the same name in (docs/store.md "Opening a library"). */
function checkReadOnly(file: string): string | null {
  const found = integrityProblems(file);
  if (found.length === 0) return null;
  if (found[0] === NOT_A_DATABASE) return NOT_A_DATABASE;
  return `it is damaged (integrity_check: ${found.join('; ').replace(/\s+/g, ' ')})`;
}

/** PRAGMA integrity_check's findings on a read-only connection (at most `max`); [] when intact. A file
 *  that is not a database, or that SQLite refuses as corrupt, is one finding. Used at open and by
 *  `pskills doctor`. */
export function integrityProblems(file: string, max = 3): string[] {
  let db: Database | undefined;
  try {
    const odd = notALibraryFile(file);
    if (odd) return [odd];
    db = connect(file, { readonly: true, fileMustExist: true });
    const found = db
      .prepare(`PRAGMA integrity_check(${Math.max(1, Math.floor(max))})`)
      .pluck()
      .all() as string[];
    return found.length === 1 && found[0] === 'ok' ? [] : found;
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_NOTADB')) return [NOT_A_DATABASE];
    if (code.startsWith('SQLITE_CORRUPT')) return [errText(err)];
    throw new DatabaseOpenError(file, errText(err), { cause: err });
  } finally {
    db?.close();
  }
}

/**
 * Builds the new library under a temporary name and hard-links it into place, so a crash leaves no
 * empty studio.db, and two processes creating it at once end up sharing one (the loser's link fails).
 */
function createNew(file: string): void {
  const tmp = `${file}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const db = connect(tmp);
    try {
      configure(db, false);
      migrate(db, migrations);
    } finally {
      db.close();
    }
    place(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new DatabaseOpenError(file, errText(err), { cause: err });
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(tmp + suffix, { force: true });
  }
}

/** Puts tmp at file unless file exists (then the other creator won): a link, or a copy where links fail. */
function place(tmp: string, file: string): void {
  try {
    linkSync(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw err;
    copyFileSync(tmp, file, constants.COPYFILE_EXCL); // e.g. FAT or some network shares: no hard links
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
