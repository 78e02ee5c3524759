// A damaged index that quick_check does not see: the skills table's UNIQUE index on name swapped with
// another table's (every page still referenced once, so quick_check says ok). Before, the store opened
// and the CLI wrote a second skill with a name that must be unique. Now integrity_check refuses the
// library at open, naming what to do, nothing is written, and `pskills doctor` reports it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { skillMd } from '../../fixtures/skills/skill-md';
import { quickCheck, writeLibrary } from './damaged';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pskills-index-damage-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const pskills = (dataDir: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

/** Swaps the root pages of skills' UNIQUE(name) index and a decoy table's (as many rows, other names), with Python's sqlite3
 *  (better-sqlite3 runs in defensive mode, which forbids writable_schema). */
function swapNameIndex(db: string): void {
  const script = `
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE decoy (name TEXT NOT NULL UNIQUE)")
db.execute("INSERT INTO decoy SELECT name || '~' FROM skills")
db.commit()
root = lambda n: db.execute("SELECT rootpage FROM sqlite_schema WHERE name=?", (n,)).fetchone()[0]
a, b = root("sqlite_autoindex_skills_1"), root("sqlite_autoindex_decoy_1")
db.execute("PRAGMA writable_schema=ON")
db.execute("UPDATE sqlite_schema SET rootpage=? WHERE name='sqlite_autoindex_skills_1'", (b,))
db.execute("UPDATE sqlite_schema SET rootpage=? WHERE name='sqlite_autoindex_decoy_1'", (a,))
db.commit()
`;
  const r = spawnSync('python3', ['-c', script, db], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

it('refuses a library whose UNIQUE index is damaged; doctor names the damage', () => {
  const dataDir = join(tmp, 'lib');
  mkdirSync(dataDir);
  const db = join(dataDir, 'studio.db');
  writeLibrary(db);
  expect(pskills(dataDir, 'doctor', '--json')).toMatchObject({ code: 0 });
  swapNameIndex(db);
  expect(quickCheck(db)).toBe('ok'); // the damage quick_check misses
  const before = sha(db);

  const src = join(tmp, 'src', 'skill-1');
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'SKILL.md'), skillMd({ name: 'skill-1' }));
  const imp = pskills(dataDir, 'import', join(tmp, 'src'));
  expect(imp.code).not.toBe(0);
  expect(imp.err).toMatch(/it is damaged \(integrity_check: .*missing from index sqlite_autoindex_/);
  expect(imp.err).toMatch(/nothing was written to it\. Restore it from a backup, or move it aside/);
  expect(pskills(dataDir, 'skills', 'create', 'skill-1').code).not.toBe(0);
  expect(sha(db)).toBe(before);

  const doc = pskills(dataDir, 'doctor', '--json');
  expect(doc.code).toBe(1);
  const report = JSON.parse(doc.out) as { ok: boolean; problems: string[]; advice: string };
  expect(report.ok).toBe(false);
  expect(report.problems.join('\n')).toMatch(/missing from index sqlite_autoindex_/);
  expect(report.advice).toMatch(/Restore it from a backup/);
  expect(sha(db)).toBe(before);
});
