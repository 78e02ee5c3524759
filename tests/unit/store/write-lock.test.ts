// A write transaction must hold the write lock from its first statement
// (BEGIN IMMEDIATE). A deferred one reads first; if another connection commits before its first
// write, SQLite fails that write with SQLITE_BUSY_SNAPSHOT, which busy_timeout never retries.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { newVersion } from './builders';

let dir: string;
let mine: Database;
let other: Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-lock-'));
  mine = openDatabase(join(dir, 'studio.db'));
  other = openDatabase(join(dir, 'studio.db'));
  other.pragma('busy_timeout = 0'); // one thread: the other writer cannot wait, only fail or pass
});
afterEach(() => {
  mine.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

it('importBatch holds the write lock before its first write, so a commit from elsewhere cannot slip in', () => {
  const repo = new SkillsRepo(mine);
  const first = newVersion({ name: 'first' });
  repo.importBatch('seed', [first]);
  let otherWrite: string | null = null;
  // 'first' is unchanged, so after it the transaction has only read; then another connection writes.
  const result = repo.importBatch('again', [first, newVersion({ name: 'second' })], {
    onProgress: (done) => {
      if (done !== 1) return;
      try {
        new SkillsRepo(other).save('sneaky', 'x', 'x', { kind: 'manual' }, 'b');
        otherWrite = 'committed';
      } catch (e) {
        otherWrite = (e as { code?: string }).code ?? String(e);
      }
    },
  });
  expect(otherWrite).toBe('SQLITE_BUSY');
  expect(result).toMatchObject({ imported: 1, unchanged: 1 });
});
