// SkillsRepo.create: version 1 of a skill that does not exist yet; a taken name is refused with
// `conflict` and nothing is written, in the same transaction as the check.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StudioError } from '../../../common/errors';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { hashOf, skillText } from './builders';

let db: Database;
let repo: SkillsRepo;
const template = { kind: 'template' } as const;

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new SkillsRepo(db);
});
afterEach(() => db.close());

const rows = () => (db.prepare('SELECT COUNT(*) AS n FROM skill_versions').get() as { n: number }).n;

describe('create', () => {
  it('writes version 1 with no parent and the provenance given', () => {
    const content = skillText('pdf', 'Read PDFs');
    const { version, created } = repo.create('pdf', content, 'Read PDFs', template, 'b1');
    expect(created).toBe(true);
    expect(version).toMatchObject({ version: 1, sha256: hashOf(content), parentVersion: null, provenance: template });
    expect(repo.get('pdf')).toMatchObject({ description: 'Read PDFs', package: null, content });
  });

  it('refuses a name that exists, with conflict, and writes nothing', () => {
    repo.save('pdf', skillText('pdf', 'Read PDFs'), 'Read PDFs', { kind: 'manual' }, 'b1');
    const before = repo.get('pdf');
    let err: unknown;
    try {
      repo.create('pdf', skillText('pdf', 'Other'), 'Other', template, 'b2');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StudioError);
    expect(err).toMatchObject({ code: 'conflict', details: { name: 'pdf' } });
    expect((err as Error).message).toBe(
      'a skill named "pdf" already exists (nothing was written); choose another name',
    );
    expect(rows()).toBe(1);
    expect(repo.get('pdf')).toEqual(before);
  });

  it('tells names apart exactly, as the store does ("PDF" is not "pdf")', () => {
    repo.create('pdf', skillText('pdf', 'a'), 'a', template, 'b1');
    expect(repo.create('PDF', skillText('PDF', 'b'), 'b', template, 'b2').version.version).toBe(1);
    expect(repo.count()).toBe(2);
  });
});
