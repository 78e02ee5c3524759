import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Provenance } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';

let db: Database;
let repo: SkillsRepo;

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new SkillsRepo(db);
});
afterEach(() => db.close());

const kinds: Provenance[] = [
  { kind: 'manual' },
  {
    kind: 'npm',
    package: '@a/b',
    version: '2.1.0',
    license: 'MIT',
    integrity: 'sha512-xyz',
    path: 'skills/pdf/SKILL.md',
  },
  { kind: 'npm', package: 'c', version: '0.0.1', license: null, integrity: null, path: 'SKILL.md' },
  { kind: 'folder', root: '/home/me/skills', path: 'pdf/SKILL.md' },
  { kind: 'tgz', file: '/tmp/x.tgz', package: null, version: null, license: 'Apache-2.0', path: 'package/SKILL.md' },
  { kind: 'lesson', run: 'r1', episode: 3, world: 'brotro-mixtus', trajectories: ['ab12cd34'], summariser: 'template' },
  { kind: 'evolve', run: '0123456789ab', candidate: 4, score: 0.75, from: 2 },
];

describe('provenance', () => {
  it.each(kinds)('round-trips $kind through a saved version', (provenance) => {
    const saved = repo.save('s', JSON.stringify(provenance), 'd', provenance, 'h');
    expect(saved.version.provenance).toEqual(provenance);
    expect(repo.get('s')?.version.provenance).toEqual(provenance);
    expect(repo.history('s')[0]?.provenance).toEqual(provenance);
  });

  it('drops keys the schema does not know before writing', () => {
    const extra = { kind: 'manual', secret: 'x' } as Provenance;
    repo.save('s', 'c', 'd', extra, 'h');
    const raw = db.prepare('SELECT provenance FROM skill_versions').get() as { provenance: string };
    expect(JSON.parse(raw.provenance)).toEqual({ kind: 'manual' });
  });

  it('rejects an unknown kind on write with an invalid_input error naming the skill', () => {
    const err = (() => {
      try {
        repo.save('pdf', 'c', 'd', { kind: 'git' } as never, 'h');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StudioError);
    expect(err).toMatchObject({ code: 'invalid_input' });
    expect((err as Error).message).toMatch(/^skill "pdf": invalid provenance/);
  });

  it('fails reading a stored provenance of the wrong shape, naming skill and version', () => {
    repo.save('pdf', 'c1', 'd', { kind: 'manual' }, 'h');
    repo.save('pdf', 'c2', 'd', { kind: 'manual' }, 'h');
    db.prepare(`UPDATE skill_versions SET provenance = '{"kind":"npm","package":"x"}' WHERE n = 1`).run();
    expect(() => repo.get('pdf', 1)).toThrow(/skill "pdf" version 1: stored provenance is invalid at "version"/);
    expect(() => repo.history('pdf')).toThrow(/version 1/);
    expect(repo.get('pdf')?.version.version).toBe(2); // other versions still read
  });

  it('the schema refuses provenance that is not JSON at all', () => {
    repo.save('pdf', 'c', 'd', { kind: 'manual' }, 'h');
    expect(() => db.prepare(`UPDATE skill_versions SET provenance = 'not json'`).run()).toThrow(/CHECK constraint/);
  });
});
