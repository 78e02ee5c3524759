// The Library table's logic: the compiled-state column joined from adapters.list (which bundles hold
// an adapter for each skill's latest version) and sorting by every column.
import { describe, expect, it } from 'vitest';
import type { AdapterSummary } from '../../../common/api/adapter-schemas';
import type { SkillSummary } from '../../../common/api/skill-schemas';
import {
  compiledOf,
  compiledStates,
  DEFAULT_SORT,
  nextSort,
  sortSkills,
  type Sort,
} from '../../../renderer/src/lib/skills/library-table';

const sha = (c: string) => c.repeat(64);
const skill = (name: string, over: Partial<SkillSummary> = {}): SkillSummary => ({
  name,
  description: `About ${name}`,
  package: 'pkg',
  versions: 1,
  latestVersion: 1,
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...over,
});
let n = 0;
const adapter = (
  skillName: string | null,
  version: number,
  bundle = 'default',
  kind: 'instant' | 'merge' = 'instant',
): AdapterSummary => {
  const key = (++n).toString(16).padStart(64, '0');
  return {
    name: null,
    id: key.slice(0, 12),
    key,
    rank: 8,
    alpha: 8,
    recipe:
      kind === 'instant'
        ? { kind: 'instant', hypernet: 'perceiver', combine: 'mean' }
        : { kind: 'merge', method: 'cat', weights: [1], rank: null, sources: [sha('a')] },
    lineage: [],
    bundle: { id: bundle, sha256: bundle === 'default' ? sha('d') : sha('e') },
    skill: skillName === null ? null : { name: skillName, version, sha256: sha('f') },
    bytes: 10,
    tensorsSha256: sha('b'),
    createdAt: '2026-01-01T00:00:00.000Z',
  };
};

describe('compiledStates', () => {
  const skills = [
    skill('pdf', { versions: 3, latestVersion: 3 }),
    skill('csv'),
    skill('xml', { versions: 2, latestVersion: 2 }),
  ];
  const adapters = [
    adapter('pdf', 3),
    adapter('pdf', 3, 'other'),
    adapter('pdf', 3), // the same bundle twice: listed once
    adapter('pdf', 1),
    adapter('xml', 1),
    adapter(null, 0, 'default', 'merge'), // merges have no skill
    adapter('gone', 1), // a skill not in the list (filtered out, or deleted)
  ];
  const states = compiledStates(skills, adapters);

  it('names the bundles that hold an adapter for the latest version', () => {
    expect(compiledOf(states, 'pdf').current).toEqual([
      { id: 'default', sha256: sha('d') },
      { id: 'other', sha256: sha('e') },
    ]);
    expect(compiledOf(states, 'pdf').olderVersions).toEqual([1]);
    expect(compiledOf(states, 'pdf').adapters.map((a) => a.version)).toEqual([3, 3, 3, 1]);
  });

  it('tells an outdated adapter from none, and skips merges and unlisted skills', () => {
    expect(compiledOf(states, 'xml')).toMatchObject({ current: [], olderVersions: [1] });
    expect(compiledOf(states, 'csv')).toEqual({ current: [], olderVersions: [], adapters: [] });
    expect(states.has('gone')).toBe(false);
    expect([...states.keys()].sort()).toEqual(['pdf', 'xml']);
  });
});

describe('sortSkills', () => {
  const skills = [
    skill('beta', { description: 'Zebra', package: null, versions: 2, updatedAt: '2026-01-03T00:00:00.000Z' }),
    skill('Alpha', { description: 'apple', package: 'zz', versions: 5, updatedAt: '2026-01-01T00:00:00.000Z' }),
    skill('gamma', { description: 'mango', package: 'aa', versions: 1, updatedAt: '2026-01-02T00:00:00.000Z' }),
    skill('delta', {
      description: 'kiwi',
      package: 'aa',
      versions: 2,
      latestVersion: 2,
      updatedAt: '2026-01-02T00:00:00.000Z',
    }),
  ];
  const compiled = compiledStates(skills, [
    adapter('gamma', 1),
    adapter('gamma', 1, 'other'),
    adapter('beta', 1),
    adapter('delta', 1),
  ]);
  const names = (sort: Sort) => sortSkills(skills, sort, compiled).map((s) => s.name);

  it('sorts by name (case-insensitive) by default, either way', () => {
    expect(names(DEFAULT_SORT)).toEqual(['Alpha', 'beta', 'delta', 'gamma']);
    expect(names({ key: 'name', dir: 'desc' })).toEqual(['gamma', 'delta', 'beta', 'Alpha']);
  });

  it('sorts by description, versions and date, ties by name', () => {
    expect(names({ key: 'description', dir: 'asc' })).toEqual(['Alpha', 'delta', 'gamma', 'beta']);
    expect(names({ key: 'versions', dir: 'desc' })).toEqual(['Alpha', 'beta', 'delta', 'gamma']);
    expect(names({ key: 'updated', dir: 'desc' })).toEqual(['beta', 'delta', 'gamma', 'Alpha']);
    expect(names({ key: 'updated', dir: 'asc' })).toEqual(['Alpha', 'delta', 'gamma', 'beta']);
  });

  it('puts skills without a package last in either direction', () => {
    expect(names({ key: 'package', dir: 'asc' })).toEqual(['delta', 'gamma', 'Alpha', 'beta']);
    expect(names({ key: 'package', dir: 'desc' })).toEqual(['Alpha', 'delta', 'gamma', 'beta']);
  });

  it('sorts by compiled state: more bundles first, then outdated adapters, then none', () => {
    expect(names({ key: 'compiled', dir: 'desc' })).toEqual(['gamma', 'beta', 'delta', 'Alpha']);
    expect(names({ key: 'compiled', dir: 'asc' })).toEqual(['Alpha', 'delta', 'beta', 'gamma']);
  });

  it('leaves its input alone', () => {
    const before = skills.map((s) => s.name);
    sortSkills(skills, { key: 'versions', dir: 'asc' }, compiled);
    expect(skills.map((s) => s.name)).toEqual(before);
  });
});

describe('nextSort', () => {
  it('flips the same column, starts text columns A→Z and numbers and dates biggest first', () => {
    expect(nextSort(DEFAULT_SORT, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort(DEFAULT_SORT, 'versions')).toEqual({ key: 'versions', dir: 'desc' });
    expect(nextSort(DEFAULT_SORT, 'updated')).toEqual({ key: 'updated', dir: 'desc' });
    expect(nextSort(DEFAULT_SORT, 'compiled')).toEqual({ key: 'compiled', dir: 'desc' });
    expect(nextSort({ key: 'versions', dir: 'desc' }, 'package')).toEqual({ key: 'package', dir: 'asc' });
  });
});
