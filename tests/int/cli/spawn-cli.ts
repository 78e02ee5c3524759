// The `pskills` child process as the CLI suites run it: a call that waits for its exit, a call that is
// killed with SIGKILL once its stderr shows a line, and a read-only look at the library it left.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';

export const PSKILLS_BIN = join(process.cwd(), 'bin', 'pskills.mjs');

/** `pskills ...args --data-dir dir`, run to its end. */
export function pskillsIn(dataDir: () => string, timeout = 300_000) {
  return (...args: string[]) => {
    const r = spawnSync(process.execPath, [PSKILLS_BIN, ...args, '--data-dir', dataDir()], {
      encoding: 'utf8',
      timeout,
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
}

/** Runs `pskills ...args` until its stderr matches `line`, then kills it with SIGKILL; its stderr. */
export function killWhen(dataDir: string, line: RegExp, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PSKILLS_BIN, ...args, '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      if (line.test(err)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL'
        ? resolve(err)
        : reject(new Error(`${args[0]} ended (${code}) before it was killed: ${err}`)),
    );
  });
}

/** The library's database, read-only, for `look`; closed after. */
export function inLibrary<T>(dataDir: string, look: (db: Database) => T): T {
  const db = new BetterSqlite3(join(dataDir, 'studio.db'), { readonly: true });
  try {
    return look(db);
  } finally {
    db.close();
  }
}
