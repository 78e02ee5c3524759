// Hash routes, so the same build works from file:// in Electron and from the web host:
//   #/library   #/skill/<name>   #/skill/<name>/v/<n>   #/skill/<name>/edit   #/playground
export type Route =
  | { page: 'library' }
  | { page: 'playground' }
  | { page: 'skill'; name: string; version: number | null; edit: boolean };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'skill' && parts[1]) {
    const name = decodeURIComponent(parts[1]);
    const version = parts[2] === 'v' && parts[3] && /^\d+$/.test(parts[3]) ? Number(parts[3]) : null;
    const edit = parts[version === null ? 2 : 4] === 'edit';
    return { page: 'skill', name, version, edit };
  }
  if (parts[0] === 'playground') return { page: 'playground' };
  return { page: 'library' };
}

export function formatRoute(route: Route): string {
  if (route.page === 'library') return '#/library';
  if (route.page === 'playground') return '#/playground';
  let hash = `#/skill/${encodeURIComponent(route.name)}`;
  if (route.version !== null) hash += `/v/${route.version}`;
  if (route.edit) hash += '/edit';
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
