// SkillsRepo.delete on a real (in-memory) SQLite: versions go with the skill in one transaction, other
// skills stay, and rows that refer to a version (trajectories here; adapters in
// tests/int/api/skill-delete.int.test.ts) make it refuse without removing anything.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StudioError } from '../../../common/errors';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { skillText } from './builders';

let db: Database;
let repo: SkillsRepo;
const manual = { kind: 'manual' } as const;
const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new SkillsRepo(db);
  for (const n of [1, 2, 3])
    repo.save('pdf', skillText('pdf', 'Read PDFs', `# pdf\n\nVersion ${n}.\n`), 'Read PDFs', manual, `b${n}`);
  repo.save('csv', skillText('csv', 'Read CSVs'), 'Read CSVs', manual, 'c1');
});
afterEach(() => db.close());

describe('SkillsRepo.delete', () => {
  it('removes the skill and all its versions, and nothing of the others', () => {
    expect(repo.delete('pdf')).toBe(3);
    expect(repo.get('pdf')).toBeNull();
    expect(repo.history('pdf')).toEqual([]);
    expect(count('skill_versions')).toBe(1);
    expect(repo.list().map((s) => s.name)).toEqual(['csv']);
  });

  it('refuses while a trajectory refers to a version, leaving every row', () => {
    const v2 = repo.versionRowId('pdf', 2)!;
    // The trajectories table changes with the schema (migration 4 added columns): fill the columns it
    // has, by what each one needs.
    const columns = (
      db.prepare('PRAGMA table_info(trajectories)').all() as { name: string; notnull: number; dflt_value: unknown }[]
    ).filter((c) => c.name !== 'id' && (c.notnull || c.name.startsWith('skill_')) && c.dflt_value === null);
    const value: Record<string, unknown> = {
      skill_version_id: v2,
      uid: 'a'.repeat(32),
      source: 'synth',
      skill_name: 'pdf',
      skill_version: 2,
      skill_sha256: repo.get('pdf', 2)!.version.sha256,
      skill_text: null,
      messages: '[]',
      provenance: '{}',
      created_at: 'now',
    };
    const names = columns.map((c) => c.name);
    db.prepare(`INSERT INTO trajectories (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`).run(
      ...names.map((n) => value[n] ?? null),
    );
    const err = (() => {
      try {
        repo.delete('pdf');
      } catch (e) {
        return e;
      }
    })() as StudioError;
    expect(err).toBeInstanceOf(StudioError);
    expect(err.code).toBe('conflict');
    expect(err.message).toBe('skill "pdf" was not deleted: 1 recorded trajectory refers to its versions');
    expect(repo.history('pdf')).toHaveLength(3);
  });

  it('an unknown name is not_found', () => {
    expect(() => repo.delete('nope')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});
