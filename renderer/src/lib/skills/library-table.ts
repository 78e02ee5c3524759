// The Library table's logic, pure (unit-tested without a DOM): which bundles hold an adapter compiled
// from each skill's current version (joined from adapters.list, no extra query), and sorting by any
// column.
import type { AdapterSummary } from '../../../../common/api/adapter-schemas';
import type { SkillSummary } from '../../../../common/api/skill-schemas';

export interface BundleRef {
  id: string;
  sha256: string;
}

export interface CompiledState {
  /** Bundles with an adapter for the skill's latest version, in the order the adapters were listed. */
  current: BundleRef[];
  /** Older versions that have an adapter (for any bundle), newest first. */
  olderVersions: number[];
  /** Every adapter compiled from any version of the skill: what a delete is refused for. */
  adapters: { id: string; version: number; bundle: BundleRef }[];
}

const EMPTY: CompiledState = { current: [], olderVersions: [], adapters: [] };

/** Per skill name; skills without adapters are absent (see `compiledOf`). */
export function compiledStates(
  skills: readonly SkillSummary[],
  adapters: readonly AdapterSummary[],
): Map<string, CompiledState> {
  const latest = new Map(skills.map((s) => [s.name, s.latestVersion]));
  const out = new Map<string, CompiledState>();
  for (const a of adapters) {
    if (a.recipe.kind !== 'instant' || !a.skill) continue;
    const head = latest.get(a.skill.name);
    if (head === undefined) continue;
    let state = out.get(a.skill.name);
    if (!state) out.set(a.skill.name, (state = { current: [], olderVersions: [], adapters: [] }));
    const bundle = { id: a.bundle.id, sha256: a.bundle.sha256 };
    state.adapters.push({ id: a.id, version: a.skill.version, bundle });
    if (a.skill.version === head) {
      if (!state.current.some((b) => b.sha256 === bundle.sha256)) state.current.push(bundle);
    } else if (!state.olderVersions.includes(a.skill.version)) state.olderVersions.push(a.skill.version);
  }
  for (const state of out.values()) state.olderVersions.sort((x, y) => y - x);
  return out;
}

export function compiledOf(states: Map<string, CompiledState>, name: string): CompiledState {
  return states.get(name) ?? EMPTY;
}

export type SortKey = 'name' | 'description' | 'package' | 'versions' | 'updated' | 'compiled';
export type SortDir = 'asc' | 'desc';
export interface Sort {
  key: SortKey;
  dir: SortDir;
}

export const DEFAULT_SORT: Sort = { key: 'name', dir: 'asc' };

/** Clicking a column: the same column flips direction; another starts at its natural direction
 *  (text A→Z, numbers and dates biggest/newest first). */
export function nextSort(sort: Sort, key: SortKey): Sort {
  if (sort.key === key) return { key, dir: sort.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: key === 'name' || key === 'description' || key === 'package' ? 'asc' : 'desc' };
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** A new array in the order asked for; ties (and skills without a package, always last) by name. */
export function sortSkills(
  skills: readonly SkillSummary[],
  sort: Sort,
  compiled: Map<string, CompiledState>,
): SkillSummary[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const byName = (a: SkillSummary, b: SkillSummary) =>
    collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const compiledRank = (s: SkillSummary) => {
    const c = compiledOf(compiled, s.name);
    return c.current.length * 1000 + (c.olderVersions.length ? 1 : 0);
  };
  const cmp = (a: SkillSummary, b: SkillSummary): number => {
    switch (sort.key) {
      case 'name':
        return sign * byName(a, b);
      case 'description':
        return sign * collator.compare(a.description, b.description);
      case 'package':
        if ((a.package === null) !== (b.package === null)) return a.package === null ? 1 : -1;
        return sign * collator.compare(a.package ?? '', b.package ?? '');
      case 'versions':
        return sign * (a.versions - b.versions);
      case 'updated':
        return sign * (Date.parse(a.updatedAt) - Date.parse(b.updatedAt));
      case 'compiled':
        return sign * (compiledRank(a) - compiledRank(b));
    }
  };
  return [...skills].sort((a, b) => cmp(a, b) || byName(a, b));
}
