// The window's route, from location.hash (routes.ts has the table), and the guard that asks before a
// navigation drops unsaved work: a link click, router.go, Back/Forward or an edited address all pass
// through it. A blocked navigation waits in `pending` until the Leave dialog answers. Several pages'
// parts may hold unsaved work at once (the skill editor, the Tests tab): each installs its own guard.
import { launchToken } from './bridge';
import { formatRoute, parseRoute, type Route } from './routes';

export { formatRoute, parseRoute, type Route, type SkillView } from './routes';

/** Registered by a page holding unsaved work (the skill editor, the Tests tab). */
export interface NavBlocker {
  /** Whether going to `to` would drop the unsaved work. */
  blocks(to: Route): boolean;
  /** Short description for the Leave dialog, e.g. `review-prs`. */
  subject(): string;
  /** What is unsaved, for the Leave dialog, e.g. `changes that are not saved as a version`. */
  what: string;
  /** Leaving keeps the work as a draft (the editor's); false: only saving keeps it. */
  keepsDraft: boolean;
  /** Why saving is not possible now, for the Leave dialog, e.g. `Fix the errors in the editor first`. */
  saveBlocked: string;
  /** Saving is possible right now (no errors, editor ready). */
  canSave(): boolean;
  /** Saves; resolves true when it did (the navigation then goes on). */
  save(): Promise<boolean>;
  /** Drops the unsaved work and its draft. */
  discard(): void;
}

export interface PendingNavigation {
  to: Route;
  blocker: NavBlocker;
}

export class Router {
  route = $state.raw<Route>({ page: 'library' });
  /** A navigation the blocker stopped, waiting for the user's answer. */
  pending = $state.raw<PendingNavigation | null>(null);

  private blockers: NavBlocker[] = [];
  /** The hash the current route came from (what Back is reverted to when blocked). */
  private hash = '';

  /** Starts following location.hash; returns the function that stops it. */
  start(): () => void {
    const onHash = () => {
      // The launch address opened in a tab that already runs the studio (`#token=T#/route`): only
      // the hash changes, so the token is taken out here before the route is read.
      if (location.hash.startsWith('#token=')) launchToken();
      this.arrive(location.hash);
    };
    // Capture phase: before a link's own handlers, so a blocked click never pushes a history entry.
    const onClick = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
      const link = e.target instanceof Element ? e.target.closest('a[href^="#"]') : null;
      const href = link?.getAttribute('href');
      if (!href || !this.stopped(parseRoute(href))) return;
      e.preventDefault();
      e.stopPropagation();
    };
    this.hash = location.hash;
    this.route = parseRoute(location.hash);
    window.addEventListener('hashchange', onHash);
    window.addEventListener('click', onClick, true);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('click', onClick, true);
    };
  }

  /** Installs the guard; returns the function that removes it. */
  block(blocker: NavBlocker): () => void {
    this.blockers = [...this.blockers, blocker];
    return () => {
      this.blockers = this.blockers.filter((b) => b !== blocker);
      if (this.pending?.blocker === blocker) this.pending = null;
    };
  }

  go(route: Route): void {
    if (this.stopped(route)) return;
    this.commit(formatRoute(route));
  }

  /** The Leave dialog's "leave": the pending navigation goes on, unasked. */
  proceed(): void {
    const pending = this.pending;
    this.pending = null;
    if (pending) this.commit(formatRoute(pending.to));
  }

  /** The Leave dialog's "stay". */
  stay(): void {
    this.pending = null;
  }

  /** True (and the navigation parked in `pending`) when a blocker says `to` would drop work. */
  private stopped(to: Route): boolean {
    const blocker = this.blockers.find((b) => b.blocks(to));
    if (!blocker) return false;
    this.pending = { to, blocker };
    return true;
  }

  private commit(hash: string): void {
    this.hash = hash;
    if (location.hash === hash) this.route = parseRoute(hash);
    else location.hash = hash; // hashchange → arrive(), which finds it accepted
  }

  /** A hash change: ours (commit), or Back/Forward/the address bar, which the blocker may revert. */
  private arrive(hash: string): void {
    if (hash !== this.hash) {
      const to = parseRoute(hash);
      if (this.stopped(to)) {
        // Put the address back without a new history entry or another hashchange.
        history.replaceState(history.state, '', this.hash || '#/library');
        return;
      }
      this.hash = hash;
    }
    this.route = parseRoute(hash);
  }
}
