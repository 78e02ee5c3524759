import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseOpenError, openDatabase } from '../../../main/store/db';
import { migrate, schemaVersion } from '../../../main/store/migrate';
import { SCHEMA_VERSION, migrations, type Migration } from '../../../main/store/migrations';
import { SkillsRepo } from '../../../main/store/skills-repo';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const tables = [
  'adapter_parents',
  'adapters',
  'adoptions',
  'bundles',
  'continual_episodes',
  'continual_runs',
  'evaluations',
  'evolve_candidates',
  'evolve_runs',
  'global_adapter_versions',
  'import_runs',
  'settings',
  'skill_tests',
  'skill_versions',
  'skills',
  'trajectories',
];

function tableNames(db: BetterSqlite3.Database): string[] {
  return (
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]
  ).map((r) => r.name);
}

describe('openDatabase', () => {
  it('creates the schema and sets the connection pragmas on a new file', () => {
    const db = openDatabase(join(dir, 'studio.db'));
    expect(tableNames(db)).toEqual(tables);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    db.close();
  });

  it('enforces foreign keys', () => {
    const db = openDatabase(':memory:');
    expect(() =>
      db
        .prepare(
          `INSERT INTO skill_versions (skill_id, n, description, content, sha256, body_hash, provenance, created_at)
           VALUES (42, 1, '', '', ?, '', '{"kind":"manual"}', '')`,
        )
        .run('0'.repeat(64)),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('reopens an existing file without re-running migrations and keeps its data', () => {
    const file = join(dir, 'studio.db');
    const first = openDatabase(file);
    new SkillsRepo(first).save('pdf', 'content', 'd', { kind: 'manual' }, 'h');
    first.close();

    const again = openDatabase(file);
    expect(schemaVersion(again)).toBe(SCHEMA_VERSION);
    expect(migrate(again, migrations)).toEqual([]);
    expect(new SkillsRepo(again).get('pdf')?.content).toBe('content');
    again.close();
  });

  it('names the file when it is not a database', () => {
    const file = join(dir, 'notes.db');
    writeFileSync(file, 'this is plain text, not SQLite\n'.repeat(100));
    expect(() => openDatabase(file)).toThrow(DatabaseOpenError);
    expect(() => openDatabase(file)).toThrow(`cannot open database ${file}: file is not a database`);
  });

  it('names the file when its directory does not exist', () => {
    const file = join(dir, 'missing', 'studio.db');
    expect(() => openDatabase(file)).toThrow(
      new RegExp(`cannot open database ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('refuses a database written by a newer schema, naming the file and both versions', () => {
    const file = join(dir, 'future.db');
    const raw = new BetterSqlite3(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    raw.close();
    expect(() => openDatabase(file)).toThrow(
      `cannot open database ${file}: schema version ${SCHEMA_VERSION + 5} is newer than this build supports (${SCHEMA_VERSION})`,
    );
  });
});

describe('migrate', () => {
  const next = SCHEMA_VERSION + 1;
  const all = migrations.map((m) => m.version);
  const addNotes: Migration = {
    version: next,
    name: 'notes',
    up: (db) => db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY)'),
  };

  it('applies only the pending migrations, in order', () => {
    const db = new BetterSqlite3(':memory:');
    expect(migrate(db, migrations)).toEqual(all);
    expect(migrate(db, [...migrations, addNotes])).toEqual([next]);
    expect(schemaVersion(db)).toBe(next);
    expect(tableNames(db)).toContain('notes');
    db.close();
  });

  it('rolls a failing migration back entirely and keeps the previous version', () => {
    const db = new BetterSqlite3(':memory:');
    migrate(db, migrations);
    const broken: Migration = {
      version: next,
      name: 'half done',
      up: (d) => {
        d.exec('CREATE TABLE half (id INTEGER)');
        d.exec('INSERT INTO no_such_table VALUES (1)');
      },
    };
    expect(() => migrate(db, [...migrations, broken])).toThrow(
      new RegExp(`migration ${next} \\("half done"\\) failed: no such table`),
    );
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION);
    expect(tableNames(db)).not.toContain('half');
    db.close();
  });

  it('refuses a list with gaps in its versions', () => {
    const db = new BetterSqlite3(':memory:');
    expect(() => migrate(db, [...migrations, { ...addNotes, version: next + 1 }])).toThrow(
      `version ${next + 1}, expected ${next}`,
    );
    expect(schemaVersion(db)).toBe(0);
    db.close();
  });
});
