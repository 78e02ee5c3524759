// Migration 4 on a copy of a version 3 library: the old trajectories table (skill version required,
// messages + provenance) is rebuilt with its rows carried over, and settings / skill_tests appear.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../main/store/db';
import { migrate } from '../../../main/store/migrate';
import { migrations, SCHEMA_VERSION } from '../../../main/store/migrations';
import { SettingsRepo } from '../../../main/store/settings-repo';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { TrajectoriesRepo } from '../../../main/store/trajectories-repo';
import { newVersion } from './builders';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-migrate4-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A studio.db as version 3 left it, with two skills and three trajectories in the old shape. */
function version3Library(file: string): void {
  const raw = new BetterSqlite3(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  migrate(raw, migrations.slice(0, 3));
  new SkillsRepo(raw).importBatch('fixture', [
    newVersion({ name: 'alpha', package: null }),
    newVersion({ name: 'beta', package: null }),
  ]);
  const add = raw.prepare(
    'INSERT INTO trajectories (id, skill_version_id, messages, provenance, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  add.run(
    1,
    1,
    JSON.stringify([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
    ]),
    JSON.stringify({ kind: 'template', seed: 3 }),
    '2025-01-02T03:04:05.678Z',
  );
  add.run(2, 2, JSON.stringify([{ role: 'user', content: 'q2' }]), JSON.stringify('llm'), '2025-01-02T03:04:06.000Z');
  add.run(3, 1, JSON.stringify({ not: 'a list' }), '{}', '2025-01-02T03:04:07.000Z');
  raw.close();
}

describe('migration 4 (trajectories, settings, skill tests)', () => {
  it('rebuilds trajectories on a copy of a version 3 file, carrying every row over', () => {
    const original = join(dir, 'v3.db');
    version3Library(original);
    const file = join(dir, 'studio.db');
    copyFileSync(original, file);
    const db = openDatabase(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION); // 4, and every later one
      const cols = db.prepare(`SELECT name, "notnull" AS nn FROM pragma_table_info('trajectories')`).all() as {
        name: string;
        nn: number;
      }[];
      expect(cols.find((c) => c.name === 'skill_version_id')!.nn).toBe(0); // a row may have no skill now
      expect(cols.map((c) => c.name)).toEqual(
        expect.arrayContaining([
          'uid',
          'source',
          'skill_name',
          'skill_sha256',
          'skill_text',
          'condition',
          'adapter_key',
          'bundle_sha256',
          'sampling',
          'verdict',
          'rating',
          'rating_note',
          'details',
        ]),
      );
      const indexes = db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trajectories' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
        )
        .pluck()
        .all();
      expect(indexes).toEqual(['trajectories_created', 'trajectories_skill_name', 'trajectories_skill_version']);

      const repo = new TrajectoriesRepo(db);
      const rows = [...repo.iterate({})];
      expect(rows.map((r) => r.rowId)).toEqual([1, 2, 3]);
      const [one, two, three] = rows.map((r) => r.trajectory);
      expect(one).toMatchObject({
        source: 'synth',
        skill: { name: 'alpha', version: 1, linked: true },
        condition: null,
        adapter: null,
        bundle: null,
        sampling: {},
        messages: [
          { role: 'user', content: 'q1' },
          { role: 'assistant', content: 'a1' },
        ],
        verdict: null,
        rating: null,
        details: { kind: 'template', seed: 3 }, // the old provenance
        createdAt: '2025-01-02T03:04:05.678Z',
      });
      expect(one!.id).toMatch(/^[0-9a-f]{32}$/);
      expect(new Set(rows.map((r) => r.trajectory.id)).size).toBe(3);
      const alpha = new SkillsRepo(db).get('alpha')!;
      expect(one!.skill!.sha256).toBe(alpha.version.sha256);
      expect(rows[0]!.skillText).toBe(alpha.content); // read through the link
      expect(two).toMatchObject({ skill: { name: 'beta', version: 1 }, details: { provenance: 'llm' } }); // a non-object provenance is wrapped
      // Messages the schema cannot read are kept in details, so every row reads (and exports).
      expect(three).toMatchObject({ messages: [], details: { legacy_messages: { not: 'a list' } } });

      // The new tables work: settings default and store; the old file copy is untouched.
      const settings = new SettingsRepo(db);
      expect(settings.get()).toEqual({
        storeTrajectories: true,
        llmBaseUrl: null,
        llmModel: null,
        llmApiKey: null,
        executionProvider: 'cpu',
        maxMergeRank: 512,
      });
      expect(settings.set({ storeTrajectories: false })).toEqual({
        storeTrajectories: false,
        llmBaseUrl: null,
        llmModel: null,
        llmApiKey: null,
        executionProvider: 'cpu',
        maxMergeRank: 512,
      });
      expect(db.prepare(`SELECT COUNT(*) FROM skill_tests`).pluck().get()).toBe(0);
      expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
      expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    } finally {
      db.close();
    }
    const old = new BetterSqlite3(original, { readonly: true });
    expect(old.pragma('user_version', { simple: true })).toBe(3);
    old.close();
  });

  it('a failing migration 4 leaves the file at version 3 with its trajectories', () => {
    const file = join(dir, 'studio.db');
    version3Library(file);
    const raw = new BetterSqlite3(file);
    const broken = [
      ...migrations.slice(0, 3),
      {
        ...migrations[3]!,
        up: (db: BetterSqlite3.Database) => (migrations[3]!.up(db), db.exec('SELECT no_such_function()')),
      },
    ];
    expect(() => migrate(raw, broken)).toThrow(/migration 4/);
    expect(raw.pragma('user_version', { simple: true })).toBe(3);
    expect(raw.prepare('SELECT COUNT(*) FROM trajectories').pluck().get()).toBe(3);
    expect(
      raw
        .prepare(`SELECT COUNT(*) FROM sqlite_master WHERE name IN ('settings', 'skill_tests', 'trajectories_v4')`)
        .pluck()
        .get(),
    ).toBe(0);
    raw.close();
  });
});
