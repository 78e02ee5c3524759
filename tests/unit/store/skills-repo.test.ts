import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { hashOf, newVersion, npmProvenance, skillText } from './builders';

let db: Database;
let repo: SkillsRepo;
const manual = { kind: 'manual' } as const;

beforeEach(() => {
  db = openDatabase(':memory:');
  repo = new SkillsRepo(db);
});
afterEach(() => db.close());

function versionRows(): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM skill_versions').get() as { n: number }).n;
}

describe('save', () => {
  it('creates version 1 for a new skill, with the content hash and no parent', () => {
    const content = skillText('pdf', 'Read PDFs');
    const { version, created } = repo.save('pdf', content, 'Read PDFs', manual, 'b1');
    expect(created).toBe(true);
    expect(version).toMatchObject({ version: 1, sha256: hashOf(content), parentVersion: null, provenance: manual });
    expect(repo.get('pdf')).toMatchObject({ name: 'pdf', description: 'Read PDFs', package: null, content });
  });

  it('makes no version when the content is identical to the latest', () => {
    const content = skillText('pdf', 'Read PDFs');
    repo.save('pdf', content, 'Read PDFs', manual, 'b1');
    const again = repo.save('pdf', content, 'Read PDFs', npmProvenance('other'), 'b1');
    expect(again.created).toBe(false);
    expect(again.version.version).toBe(1);
    expect(again.version.provenance).toEqual(manual); // the stored version, not the new input
    expect(versionRows()).toBe(1);
  });

  it('appends n+1 linked to the previous latest when the content changes', () => {
    repo.save('pdf', 'v1', 'one', manual, 'b1');
    repo.save('pdf', 'v2', 'two', manual, 'b2');
    const third = repo.save('pdf', 'v3', 'three', manual, 'b3');
    expect(third).toMatchObject({ created: true, version: { version: 3, parentVersion: 2 } });
    expect(repo.history('pdf').map((v) => [v.version, v.parentVersion])).toEqual([
      [3, 2],
      [2, 1],
      [1, null],
    ]);
    const parentIds = db
      .prepare(
        'SELECT v.n, p.n AS pn FROM skill_versions v LEFT JOIN skill_versions p ON p.id = v.parent_id ORDER BY v.n',
      )
      .all();
    expect(parentIds).toEqual([
      { n: 1, pn: null },
      { n: 2, pn: 1 },
      { n: 3, pn: 2 },
    ]);
  });

  it('goes back to earlier content as a new version, not by reusing the old one', () => {
    repo.save('pdf', 'A', 'a', manual, 'ba');
    repo.save('pdf', 'B', 'b', manual, 'bb');
    const back = repo.save('pdf', 'A', 'a', manual, 'ba');
    expect(back).toMatchObject({ created: true, version: { version: 3, parentVersion: 2, sha256: hashOf('A') } });
  });

  it('numbers versions per skill', () => {
    repo.save('a', 'a1', '', manual, 'h');
    repo.save('a', 'a2', '', manual, 'h');
    expect(repo.save('b', 'b1', '', manual, 'h').version.version).toBe(1);
  });

  it('keeps the package of an imported skill when it is edited by hand', () => {
    repo.importBatch('npm:pkg-a', [newVersion({ name: 'pdf' })]);
    repo.save('pdf', 'edited', 'edited', manual, 'h2');
    expect(repo.get('pdf')?.package).toBe('pkg-a');
    expect(repo.list()[0]?.description).toBe('edited');
  });

  it('rejects a provenance that does not match the schema and writes nothing', () => {
    const bad = { kind: 'npm', package: 'x' } as never;
    expect(() => repo.save('pdf', 'c', 'd', bad, 'h')).toThrow(/skill "pdf": invalid provenance at "version"/);
    expect(repo.count()).toBe(0);
  });
});

describe('get and history', () => {
  beforeEach(() => {
    repo.save('pdf', 'first', 'old description', manual, 'h1');
    repo.save('pdf', 'second', 'new description', npmProvenance('p'), 'h2');
  });

  it('returns the latest version by default and a given version by number', () => {
    expect(repo.get('pdf')).toMatchObject({
      content: 'second',
      description: 'new description',
      version: { version: 2 },
    });
    expect(repo.get('pdf', 1)).toMatchObject({
      content: 'first',
      description: 'old description',
      version: { version: 1 },
    });
  });

  it('returns null for an unknown skill or version', () => {
    expect(repo.get('nope')).toBeNull();
    expect(repo.get('pdf', 3)).toBeNull();
    expect(repo.history('nope')).toEqual([]);
  });

  it("lists history newest first with each version's provenance", () => {
    const h = repo.history('pdf');
    expect(h.map((v) => v.version)).toEqual([2, 1]);
    expect(h[0]?.provenance).toEqual(npmProvenance('p'));
    expect(h[1]?.provenance).toEqual(manual);
  });
});

describe('list and packages', () => {
  beforeEach(() => {
    repo.importBatch('fixture', [
      newVersion({ name: 'pdf-tools', description: 'Read and fill PDF forms', package: '@acme/docs' }),
      newVersion({ name: 'xlsx', description: 'Spreadsheets: formulas and charts', package: '@acme/docs' }),
      newVersion({ name: 'git-helper', description: 'Rebase without fear', package: 'devkit' }),
      newVersion({ name: 'Café', description: 'ÉCRIRE des menus', package: null }),
    ]);
    repo.save('xlsx', 'changed', 'Spreadsheets, now with pivots', manual, 'h');
  });

  it('lists all skills by name with version counts', () => {
    const all = repo.list();
    expect(all.map((s) => s.name)).toEqual(['Café', 'git-helper', 'pdf-tools', 'xlsx']);
    expect(all.find((s) => s.name === 'xlsx')).toMatchObject({
      versions: 2,
      latestVersion: 2,
      description: 'Spreadsheets, now with pivots',
      package: '@acme/docs',
    });
    expect(all.find((s) => s.name === 'Café')?.package).toBeNull();
  });

  it('searches name, description and package, ignoring case', () => {
    expect(repo.list({ query: 'PDF' }).map((s) => s.name)).toEqual(['pdf-tools']);
    expect(repo.list({ query: 'rebase' }).map((s) => s.name)).toEqual(['git-helper']);
    expect(repo.list({ query: 'ACME' }).map((s) => s.name)).toEqual(['pdf-tools', 'xlsx']);
    expect(repo.list({ query: 'pivots' }).map((s) => s.name)).toEqual(['xlsx']);
    expect(repo.list({ query: 'formulas' })).toEqual([]); // only the newest description counts
    expect(repo.list({ query: 'écrire' }).map((s) => s.name)).toEqual(['Café']);
    expect(repo.list({ query: 'CAFÉ' }).map((s) => s.name)).toEqual(['Café']);
  });

  it('treats % and _ in a query as plain characters', () => {
    expect(repo.list({ query: '%' })).toEqual([]);
    expect(repo.list({ query: 'git_' })).toEqual([]);
  });

  it('ignores an empty query', () => {
    expect(repo.list({ query: '   ' })).toHaveLength(4);
  });

  it('filters by exact package, combined with a query', () => {
    expect(repo.list({ package: '@acme/docs' }).map((s) => s.name)).toEqual(['pdf-tools', 'xlsx']);
    expect(repo.list({ package: '@acme' })).toEqual([]);
    expect(repo.list({ package: '@acme/docs', query: 'pivot' }).map((s) => s.name)).toEqual(['xlsx']);
  });

  it('counts skills per package', () => {
    expect(repo.packages()).toEqual([
      { package: '@acme/docs', skills: 2 },
      { package: 'devkit', skills: 1 },
    ]);
    expect(repo.count()).toBe(4);
  });
});

describe('importBatch', () => {
  it('imports new skills and records the run', () => {
    const skipped = [{ path: 'skills/bad/SKILL.md', reason: 'no description' }];
    const started = new Date('2025-01-02T03:04:05.000Z');
    const res = repo.importBatch('npm:pkg-a@1', [newVersion({ name: 'a' }), newVersion({ name: 'b' })], {
      skipped,
      startedAt: started,
    });
    expect(res).toMatchObject({ imported: 2, unchanged: 0 });
    const run = db.prepare('SELECT * FROM import_runs WHERE id = ?').get(res.runId) as Record<string, unknown>;
    expect(run).toMatchObject({ source: 'npm:pkg-a@1', imported: 2, unchanged: 0, started_at: started.toISOString() });
    expect(JSON.parse(run.skipped as string)).toEqual(skipped);
  });

  it('re-importing the same content changes nothing; changed content gets a new version', () => {
    repo.importBatch('s', [newVersion({ name: 'a' }), newVersion({ name: 'b' })]);
    const res = repo.importBatch('s', [
      newVersion({ name: 'a' }),
      newVersion({ name: 'b', content: 'b changed', description: 'B2', package: 'pkg-b' }),
    ]);
    expect(res).toMatchObject({ imported: 1, unchanged: 1 });
    expect(repo.get('a')?.version.version).toBe(1);
    expect(repo.get('b')).toMatchObject({
      content: 'b changed',
      package: 'pkg-b',
      version: { version: 2, parentVersion: 1 },
    });
    expect(repo.list({ query: 'B2' }).map((s) => s.name)).toEqual(['b']);
  });

  it('applies the same-name rules within one batch, in order', () => {
    const res = repo.importBatch('s', [
      newVersion({ name: 'a', content: '1' }),
      newVersion({ name: 'a', content: '1' }),
      newVersion({ name: 'a', content: '2' }),
    ]);
    expect(res).toMatchObject({ imported: 2, unchanged: 1 });
    expect(repo.history('a').map((v) => v.version)).toEqual([2, 1]);
  });

  it('writes nothing at all when one version in the batch is invalid', () => {
    repo.importBatch('first', [newVersion({ name: 'keep' })]);
    const bad = { ...newVersion({ name: 'z' }), provenance: { kind: 'folder', root: '/x' } } as never;
    expect(() =>
      repo.importBatch('second', [newVersion({ name: 'keep', content: 'new' }), newVersion({ name: 'y' }), bad]),
    ).toThrow(/skill "z": invalid provenance/);
    expect(repo.list().map((s) => s.name)).toEqual(['keep']);
    expect(repo.get('keep')?.version.version).toBe(1);
    expect(db.prepare('SELECT source FROM import_runs').all()).toEqual([{ source: 'first' }]);
  });

  it('reports progress inside the transaction and rolls back when the callback throws', () => {
    const seen: string[] = [];
    expect(() =>
      repo.importBatch('s', [newVersion({ name: 'a' }), newVersion({ name: 'b' }), newVersion({ name: 'c' })], {
        onProgress: (done, total) => {
          seen.push(`${done}/${total}`);
          if (done === 2) throw new Error('cancelled');
        },
      }),
    ).toThrow('cancelled');
    expect(seen).toEqual(['1/3', '2/3']);
    expect(repo.count()).toBe(0);
  });

  it('finds versions by body hash', () => {
    const v = newVersion({ name: 'a' });
    expect(repo.hasBodyHash(v.bodyHash)).toBe(false);
    repo.importBatch('s', [v]);
    expect(repo.hasBodyHash(v.bodyHash)).toBe(true);
    expect(repo.hasBodyHash(hashOf('other'))).toBe(false);
  });
});
