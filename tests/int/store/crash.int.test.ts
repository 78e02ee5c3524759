// A process killed in the middle of importBatch must leave the database intact, holding every
// earlier commit and nothing of the interrupted import.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { BASE, BULK } from './batches';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const child = fileURLToPath(new URL('./import-child.ts', import.meta.url));

interface ChildRun {
  lines: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  walBytes: { base?: number; mid?: number };
  stderr: string;
}

function runChild(file: string, mode: 'crash' | 'complete'): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, file, mode], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run: ChildRun = { lines: [], code: null, signal: null, walBytes: {}, stderr: '' };
    proc.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      run.lines.push(line);
      if (line.startsWith('base ')) run.walBytes.base = statSync(`${file}-wal`).size;
      if (line.startsWith('mid ')) {
        run.walBytes.mid = statSync(`${file}-wal`).size;
        proc.kill('SIGKILL');
      }
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => resolve({ ...run, code, signal }));
  });
}

function payload(run: ChildRun, tag: string): unknown {
  const line = run.lines.find((l) => l.startsWith(`${tag} `));
  return line === undefined ? undefined : JSON.parse(line.slice(tag.length + 1));
}

function scalar(db: Database, sql: string): unknown {
  return db.prepare(sql).pluck().get();
}

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-crash-'));
  file = join(dir, 'studio.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('SIGKILL in the middle of importBatch keeps the earlier import and none of the killed one', async () => {
  const run = await runChild(file, 'crash');

  expect(run.stderr).toBe('');
  expect(payload(run, 'base')).toMatchObject({ imported: BASE, unchanged: 0 });
  expect(payload(run, 'mid')).toEqual({ done: BULK / 2, inTransaction: true });
  // Killed by us while blocked inside the transaction, not finished or crashed on its own.
  expect(run.signal).toBe('SIGKILL');
  expect(run.code).toBeNull();
  expect(payload(run, 'bulk')).toBeUndefined();
  // Uncommitted pages had spilled to the WAL, so recovery really had something to discard.
  expect(run.walBytes.mid).toBeGreaterThan((run.walBytes.base ?? Infinity) + 1024 * 1024);

  const db = openDatabase(file);
  try {
    expect(scalar(db, 'PRAGMA integrity_check')).toBe('ok');
    expect(scalar(db, 'PRAGMA foreign_key_check')).toBeUndefined();
    const repo = new SkillsRepo(db);
    expect(repo.count()).toBe(BASE);
    expect(scalar(db, 'SELECT COUNT(*) FROM skill_versions')).toBe(BASE);
    expect(scalar(db, `SELECT COUNT(*) FROM skills WHERE name LIKE 'bulk-%'`)).toBe(0);
    expect(scalar(db, 'SELECT MAX(n) FROM skill_versions')).toBe(1);
    expect(db.prepare('SELECT source, imported FROM import_runs').all()).toEqual([{ source: 'base', imported: BASE }]);
    expect(repo.get('base-1')?.description).toBe('Skill base-1, revision 1');
  } finally {
    db.close();
  }
});

it('the same import run to completion holds all of it', async () => {
  const run = await runChild(file, 'complete');

  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(payload(run, 'bulk')).toMatchObject({ imported: BULK - BASE / 2, unchanged: BASE / 2 });

  const db = openDatabase(file);
  try {
    expect(scalar(db, 'PRAGMA integrity_check')).toBe('ok');
    const repo = new SkillsRepo(db);
    expect(repo.count()).toBe(BULK);
    expect(scalar(db, 'SELECT COUNT(*) FROM skill_versions')).toBe(BASE + BULK - BASE / 2);
    expect(repo.get('base-1')).toMatchObject({
      description: 'Skill base-1, revision 2',
      version: { version: 2, parentVersion: 1 },
    });
    expect(repo.get('base-2')?.version.version).toBe(1);
    expect(repo.get(`bulk-${BULK - BASE - 1}`)?.version.version).toBe(1);
    expect(db.prepare('SELECT source FROM import_runs ORDER BY id').pluck().all()).toEqual(['base', 'bulk']);
  } finally {
    db.close();
  }
});
