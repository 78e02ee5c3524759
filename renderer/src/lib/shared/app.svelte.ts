// The studio window's state, built once by App.svelte: routes, the library, the Import and New skill
// dialogs, the Playground, the adapter library and each skill's Compile and Compare.
import { AdapterLibrary } from '../adapters/adapter-library.svelte';
import { BatchCompile } from '../skills/batch-compile.svelte';
import { ContinualPageState } from '../continual/continual-run.svelte';
import { DraftStore, type KeyValueStore } from './drafts';
import { ExampleState } from '../compare/example.svelte';
import { ImportRun } from '../skills/import-run.svelte';
import { Library } from '../skills/library.svelte';
import { ModelsPage } from '../models/models.svelte';
import { NewSkillDialog } from '../skills/new-skill.svelte';
import { Playground } from '../playground/playground.svelte';
import { Router } from './router.svelte';
import { SkillLab } from '../compare/skill-lab.svelte';
import { inElectron, onNewToken, onServerStopped, studio } from './bridge';
import { ServerConnection } from './server-connection.svelte';
import { TrajectoryBrowser } from '../continual/trajectories.svelte';

/** The window's localStorage, or null where it is switched off (reading it can throw). */
function windowStorage(): KeyValueStore | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export class StudioApp {
  readonly router = new Router();
  /** Unsaved editor text per skill, restored when its editor opens again. */
  readonly drafts = new DraftStore(windowStorage());
  readonly library = new Library((name) => this.forget(name));
  readonly importRun = new ImportRun(() => void this.library.refresh());
  readonly models = new ModelsPage(studio);
  readonly playground = new Playground(() => void this.adapters.refresh());
  readonly adapters = new AdapterLibrary();
  /** The Library's "Compile selected"; new adapters refresh the adapter list (and the compiled column). */
  readonly batch = new BatchCompile(() => void this.adapters.refresh());
  /** The Trajectories page: filters, the open trajectory, rating and export. */
  readonly trajectories = new TrajectoryBrowser(studio);
  /** The Continual page; kept for the session so a run goes on (and shows) across pages. */
  readonly continual = new ContinualPageState(() => {
    void this.adapters.refresh();
    void this.library.refresh(); // each lesson is a skill version
  });
  /** "Try an example": the SkillWorld example skills, their held-out prompts and checkers. */
  readonly example = new ExampleState(windowStorage());
  importOpen = $state(false);
  /** The web host stopped (a call found nobody): the banner with the restart command and Retry. */
  readonly server = new ServerConnection(
    () => studio.app.info({}),
    onServerStopped,
    () => {
      void this.library.refresh();
      void this.adapters.refresh();
      void this.playground.bundle.refresh();
    },
    inElectron ? null : onNewToken,
    !inElectron,
  );
  /** Library → New skill: once version 1 exists, the Library lists it and its editor opens. */
  readonly newSkill = new NewSkillDialog(studio, (name) => {
    void this.library.refresh();
    this.router.go({ page: 'skill', name, version: null, view: 'edit' });
  });

  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a cache read inside $derived; never rendered itself
  private readonly labs = new Map<string, SkillLab>();

  /** Compile and Compare state of one skill (made on first use, kept for the session). */
  lab(name: string): SkillLab {
    let lab = this.labs.get(name);
    if (!lab) {
      // Compile and Compare can add adapters: the Adapters list (and its count) follows.
      lab = new SkillLab(name, () => void this.adapters.refresh());
      this.labs.set(name, lab);
    }
    return lab;
  }

  /** Starts routing and the first load; returns the function that stops everything. */
  start(): () => void {
    const stopRouter = this.router.start();
    const stopServer = this.server.start();
    void this.library.refresh();
    void this.adapters.refresh();
    return () => {
      stopRouter();
      stopServer();
      this.library.dispose();
      this.importRun.cancel();
      this.playground.dispose();
      this.adapters.dispose();
      this.batch.cancel();
      this.continual.cancel();
      for (const lab of this.labs.values()) lab.dispose();
    };
  }

  /** A deleted skill: its draft and its Compile/Compare state go too. */
  private forget(name: string): void {
    this.drafts.remove(name);
    this.labs.get(name)?.dispose();
    this.labs.delete(name);
  }

  /** Imports the example skills and opens the first on the compare page with a held-out prompt;
   *  every example skill's compare page knows its held-out prompts' checkers. */
  async tryExample(): Promise<void> {
    const set = await this.example.load();
    if (!set) return;
    void this.library.refresh();
    for (const s of set.skills) {
      const compare = this.lab(s.name).compare;
      compare.addChecks(s.tasks.map((t) => ({ prompt: t.prompt, expect: t.expect, source: 'held-out task' })));
      if (!compare.prompt.trim() && s.tasks[0]) compare.prompt = s.tasks[0].prompt;
    }
    this.router.go({ page: 'skill', name: set.open, version: null, view: 'compare' });
  }

  openNewSkill(): void {
    this.newSkill.show();
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
