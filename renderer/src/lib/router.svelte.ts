// Hash routes, so the same build works from file:// in Electron and from the web host:
//   #/library   #/skill/<name>   #/skill/<name>/v/<n>   #/skill/<name>/edit   #/skill/<name>/compare
//   #/playground   #/adapters   #/adapters/<id>
/** What the Skill page shows: the rendered SKILL.md, the editor, or Compile and Compare. */
export type SkillView = 'read' | 'edit' | 'compare';

export type Route =
  | { page: 'library' }
  | { page: 'playground' }
  | { page: 'adapters'; id: string | null }
  | { page: 'skill'; name: string; version: number | null; view: SkillView };

const VIEWS: readonly string[] = ['edit', 'compare'];

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'skill' && parts[1]) {
    const name = decodeURIComponent(parts[1]);
    const version = parts[2] === 'v' && parts[3] && /^\d+$/.test(parts[3]) ? Number(parts[3]) : null;
    const last = parts[version === null ? 2 : 4] ?? '';
    return { page: 'skill', name, version, view: VIEWS.includes(last) ? (last as SkillView) : 'read' };
  }
  if (parts[0] === 'playground') return { page: 'playground' };
  if (parts[0] === 'adapters') return { page: 'adapters', id: parts[1] && /^[0-9a-f]+$/.test(parts[1]) ? parts[1] : null };
  return { page: 'library' };
}

export function formatRoute(route: Route): string {
  if (route.page === 'library') return '#/library';
  if (route.page === 'playground') return '#/playground';
  if (route.page === 'adapters') return route.id ? `#/adapters/${route.id}` : '#/adapters';
  let hash = `#/skill/${encodeURIComponent(route.name)}`;
  if (route.version !== null) hash += `/v/${route.version}`;
  if (route.view !== 'read') hash += `/${route.view}`;
  return hash;
}

export class Router {
  route = $state.raw<Route>({ page: 'library' });

  /** Starts following location.hash; returns the function that stops it. */
  start(): () => void {
    const sync = () => {
      this.route = parseRoute(location.hash);
    };
    sync();
    window.addEventListener('hashchange', sync);
    return () => window.removeEventListener('hashchange', sync);
  }

  go(route: Route): void {
    const hash = formatRoute(route);
    if (location.hash === hash) this.route = parseRoute(hash);
    else location.hash = hash;
  }
}
