// The studio window's state, built once by App.svelte: routes, the library, the import dialog and
// the Playground.
import { ImportRun } from './import-run.svelte';
import { Library } from './library.svelte';
import { Playground } from './playground.svelte';
import { Router } from './router.svelte';

export class StudioApp {
  readonly router = new Router();
  readonly library = new Library();
  readonly importRun = new ImportRun(() => void this.library.refresh());
  readonly playground = new Playground();
  importOpen = $state(false);

  /** Starts routing and the first load; returns the function that stops everything. */
  start(): () => void {
    const stopRouter = this.router.start();
    void this.library.refresh();
    return () => {
      stopRouter();
      this.library.dispose();
      this.importRun.cancel();
      this.playground.dispose();
    };
  }

  openImport(): void {
    this.importOpen = true;
  }

  /** Hides the dialog. A running import keeps going (reopen to watch it); a finished one is cleared. */
  closeImport(): void {
    this.importOpen = false;
    this.importRun.reset();
  }
}
