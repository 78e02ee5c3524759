// Hash routes, so the same build works from file:// in Electron and from the web host:
//   #/library   #/skill/<name>   #/skill/<name>/v/<n>   #/skill/<name>/edit   #/skill/<name>/compare
//   #/skill/<name>/evolve   #/skill/<name>/tests   #/skill/<name>/diff   #/skill/<name>/diff/<from>/<to>   #/playground   #/adapters   #/adapters/<id>
//   #/adapters/global   #/adapters/global/run/<run>   #/trajectories   #/trajectories/<id>   #/settings   #/continual
// Pure functions (no DOM): the Router (router.svelte.ts) and the unit tests share them.

/** What the Skill page shows: the rendered SKILL.md, the editor, Compile and Compare, a version diff,
 *  Evolve, or the verifier tests (Tests). */
export type SkillView = 'read' | 'edit' | 'compare' | 'diff' | 'evolve' | 'tests';

export type SkillRoute = {
  page: 'skill';
  name: string;
  /** The version shown (diff: the right-hand side); null = the latest. */
  version: number | null;
  view: SkillView;
  /** diff only: the left-hand version; null = the one before `version`. */
  base?: number | null;
};

export type Route =
  | { page: 'library' }
  | { page: 'playground' }
  | { page: 'models' }
  /** tab 'global': the global adapter's timeline, a tab of its own beside the list; with `run`, the
   *  timeline of a continual run's own global adapter, in the run's workspace. */
  | { page: 'adapters'; id: string | null; tab?: 'global'; run?: string }
  | { page: 'trajectories'; id: string | null }
  | { page: 'continual' }
  | { page: 'settings' }
  | SkillRoute;

const VIEWS: readonly string[] = ['edit', 'compare', 'evolve', 'tests'];

const versionOf = (part: string | undefined): number | null =>
  part && /^\d+$/.test(part) && Number(part) > 0 ? Number(part) : null;

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'skill' && parts[1]) {
    const name = decodeURIComponent(parts[1]);
    if (parts[2] === 'diff')
      return { page: 'skill', name, version: versionOf(parts[4]), view: 'diff', base: versionOf(parts[3]) };
    const version = parts[2] === 'v' ? versionOf(parts[3]) : null;
    const last = parts[version === null ? 2 : 4] ?? '';
    return { page: 'skill', name, version, view: VIEWS.includes(last) ? (last as SkillView) : 'read' };
  }
  if (parts[0] === 'models') return { page: 'models' };
  if (parts[0] === 'playground') return { page: 'playground' };
  if (parts[0] === 'continual') return { page: 'continual' };
  if (parts[0] === 'settings') return { page: 'settings' };
  if (parts[0] === 'adapters') {
    if (parts[1] === 'global') {
      const run = parts[2] === 'run' && parts[3] && /^[0-9a-f]{12}$/.test(parts[3]) ? parts[3] : null;
      return run ? { page: 'adapters', id: null, tab: 'global', run } : { page: 'adapters', id: null, tab: 'global' };
    }
    return { page: 'adapters', id: parts[1] && /^[0-9a-f]+$/.test(parts[1]) ? parts[1] : null };
  }
  if (parts[0] === 'trajectories')
    return { page: 'trajectories', id: parts[1] && /^[0-9a-f]{6,32}$/.test(parts[1]) ? parts[1] : null };
  return { page: 'library' };
}

export function formatRoute(route: Route): string {
  if (route.page === 'library') return '#/library';
  if (route.page === 'models') return '#/models';
  if (route.page === 'playground') return '#/playground';
  if (route.page === 'continual') return '#/continual';
  if (route.page === 'settings') return '#/settings';
  if (route.page === 'adapters')
    return route.tab === 'global'
      ? route.run
        ? `#/adapters/global/run/${route.run}`
        : '#/adapters/global'
      : route.id
        ? `#/adapters/${route.id}`
        : '#/adapters';
  if (route.page === 'trajectories') return route.id ? `#/trajectories/${route.id}` : '#/trajectories';
  let hash = `#/skill/${encodeURIComponent(route.name)}`;
  if (route.view === 'diff') {
    const base = route.base ?? null;
    // Both sides or neither: a lone right-hand side is written with `auto` on the left.
    if (base !== null || route.version !== null) hash += `/diff/${base ?? 'auto'}/${route.version ?? 'latest'}`;
    else hash += '/diff';
    return hash;
  }
  if (route.version !== null) hash += `/v/${route.version}`;
  if (route.view !== 'read') hash += `/${route.view}`;
  return hash;
}

/** Whether `route` still shows the editor of skill `name` (so unsaved text in it stays on screen). */
export function keepsEditor(route: Route, name: string): boolean {
  return route.page === 'skill' && route.name === name && route.view === 'edit';
}

/**
 * The two versions a diff shows, from the route and the skill's history: the right-hand side is the
 * route's version (else the latest), the left-hand side the route's base (else the version before the
 * right-hand one, else the right-hand one itself when the skill has a single version).
 */
export function diffPair(
  versions: readonly number[],
  base: number | null,
  version: number | null,
): { from: number; to: number } | null {
  if (versions.length === 0) return null;
  const sorted = [...versions].sort((a, b) => a - b);
  const to = version !== null && sorted.includes(version) ? version : sorted.at(-1)!;
  if (base !== null && sorted.includes(base)) return { from: base, to };
  const earlier = sorted.filter((v) => v < to);
  return { from: earlier.at(-1) ?? to, to };
}
