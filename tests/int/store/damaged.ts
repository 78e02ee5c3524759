// Builds a real studio.db with many rows and damages pages in its middle, for the defect-8 tests.
import { openSync, closeSync, statSync, writeSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { newVersion, skillText } from '../../unit/store/builders';

export const ROWS = 2000;

/** A closed (checkpointed) library of ROWS skills, ~4 MB. */
export function writeLibrary(file: string): void {
  const db = openDatabase(file);
  const filler = 'Steps for the task, written out at some length. '.repeat(30);
  const versions = Array.from({ length: ROWS }, (_, i) =>
    newVersion({
      name: `skill-${i}`,
      content: skillText(`skill-${i}`, `About skill ${i}`, `# Skill ${i}\n\n${filler}\n`),
    }),
  );
  new SkillsRepo(db).importBatch('seed', versions);
  db.close();
}

/** Overwrites 64 KiB in the middle of the file with garbage, as a bad disk or a stray write would. */
export function damageMiddle(file: string): void {
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(64 * 1024, 0xa5), 0, 64 * 1024, Math.floor(size / 2 / 4096) * 4096 + 100);
  closeSync(fd);
}

/** What SQLite itself says of the file, read-only: 'ok', its findings, or the error it threw. */
export function quickCheck(file: string): string {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare('PRAGMA quick_check').pluck().all() as string[]).join('\n');
  } catch (e) {
    return (e as Error).message;
  } finally {
    db.close();
  }
}
