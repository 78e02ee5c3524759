// A damaged data folder as a user meets it: `import` and `skills show` on a damaged or empty studio.db
// exit non-zero with one line saying what to do, and the file keeps every byte.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { skillMd } from '../../fixtures/skills/skill-md';
import { damageMiddle, quickCheck, writeLibrary } from './damaged';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let tmp: string;
let src: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pskills-damaged-cli-'));
  src = join(tmp, 'src');
  mkdirSync(join(src, 'fresh'), { recursive: true });
  writeFileSync(join(src, 'fresh', 'SKILL.md'), skillMd({ name: 'fresh' }));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const pskills = (dataDir: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

it('a damaged studio.db: import and skills show refuse it and write nothing', () => {
  const dataDir = join(tmp, 'damaged');
  mkdirSync(dataDir);
  const db = join(dataDir, 'studio.db');
  writeLibrary(db);
  damageMiddle(db);
  expect(quickCheck(db)).not.toBe('ok');
  const before = sha(db);
  for (const args of [
    ['import', src],
    ['skills', 'show', 'skill-1'],
  ]) {
    const r = pskills(dataDir, ...args);
    expect(r.code, args.join(' ')).not.toBe(0);
    expect(r.err).toMatch(
      new RegExp(
        `^pskills: cannot open database ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: it is damaged \\(integrity_check: .+\\); nothing was written to it\\. Restore it from a backup, or move it aside to start a new library`,
      ),
    );
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(sha(db), args.join(' ')).toBe(before);
  }
});

it('a zero-length studio.db is refused, not turned into an empty library', () => {
  const dataDir = join(tmp, 'empty');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'studio.db'), '');
  for (const args of [
    ['import', src],
    ['skills', 'list'],
  ]) {
    const r = pskills(dataDir, ...args);
    expect(r.code, args.join(' ')).not.toBe(0);
    expect(r.err).toContain('it is empty (0 bytes), so it is not a library this app wrote; nothing was written to it');
    expect(readFileSync(join(dataDir, 'studio.db')).length).toBe(0);
  }
});
