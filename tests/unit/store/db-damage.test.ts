// A damaged, empty or foreign studio.db is refused when opened, with what to do,
// and not a byte of it is changed. Only a missing file starts a new library.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DatabaseOpenError, openDatabase } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { damageMiddle, quickCheck, ROWS, writeLibrary } from '../../int/store/damaged';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-damage-'));
  file = join(dir, 'studio.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const advice = 'nothing was written to it. Restore it from a backup, or move it aside to start a new library';

it('refuses a library whose pages are damaged, naming the check, and leaves the file as it was', () => {
  writeLibrary(file);
  damageMiddle(file);
  expect(quickCheck(file)).not.toBe('ok'); // the damage is real
  const before = sha(file);
  const err = (() => {
    try {
      openDatabase(file).close();
    } catch (e) {
      return e as Error;
    }
    return null;
  })();
  expect(err).toBeInstanceOf(DatabaseOpenError);
  expect(err?.message).toMatch(
    new RegExp(
      `^cannot open database ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: it is damaged \\(integrity_check: .+\\); ${advice}`,
    ),
  );
  expect(err?.message).not.toContain('\n'); // the CLI prints the first line only
  expect(sha(file)).toBe(before);
});

it('refuses a zero-length studio.db instead of making it an empty library', () => {
  writeFileSync(file, '');
  expect(() => openDatabase(file)).toThrow(
    `cannot open database ${file}: it is empty (0 bytes), so it is not a library this app wrote; ${advice}`,
  );
  expect(readFileSync(file).length).toBe(0);
});

it('refuses a file that is not SQLite with the same advice, unchanged', () => {
  writeFileSync(file, 'this is plain text, not SQLite\n'.repeat(100));
  const before = sha(file);
  expect(() => openDatabase(file)).toThrow(`cannot open database ${file}: file is not a database; ${advice}`);
  expect(sha(file)).toBe(before);
});

it('creates a missing file as a new library, leaving no temporary files, and opens an intact one', () => {
  writeLibrary(file);
  expect(readdirSync(dir)).toEqual(['studio.db']);
  const db = openDatabase(file);
  expect(new SkillsRepo(db).count()).toBe(ROWS);
  db.close();
  expect(existsSync(`${file}-wal`)).toBe(false);
});
