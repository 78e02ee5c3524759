// Window-wide desktop conventions, made once by App.svelte: the theme, the command palette (Ctrl/Cmd+K)
// and importing what is dropped onto the window. Listeners are added by start() and removed by the
// function it returns.
import type { StudioApp } from './app.svelte';
import { studio } from './bridge';
import type { KeyValueStore } from './drafts';
import { carriesFiles, isPeftListing, planDrop, toBase64, type DroppedItem } from '../skills/drop-import';
import { friendlyError, toUiError } from './errors';
import { isPaletteKey } from './palette';
import { paletteCommands } from './palette-commands';
import { PaletteState } from './palette.svelte';
import { ThemeState } from '../settings/theme.svelte';

function windowStorage(): KeyValueStore | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export class Desktop {
  readonly theme = new ThemeState(windowStorage());
  readonly palette: PaletteState;
  /** A drag carrying files is over the window (the drop overlay shows). */
  dragging = $state(false);
  /** Why the last drop imported nothing, in words; null when there is nothing to say. */
  dropMessage = $state<string | null>(null);

  constructor(private readonly app: StudioApp) {
    this.palette = new PaletteState(
      (skills) =>
        paletteCommands({
          route: app.router.route,
          skills,
          themeChoice: this.theme.choice,
          go: (route) => app.router.go(route),
          openImport: () => app.openImport(),
          openNewSkill: () => app.openNewSkill(),
          compile: (name, version) => {
            app.router.go({ page: 'skill', name, version, view: 'compare' });
            void app.lab(name).compile.start(version === null ? { name } : { name, version });
          },
          distil: (name, version) => void this.distil(name, version),
          compare: (name, version) => void this.compare(name, version),
          ...(app.router.route.page === 'skill' && app.example.skill(app.router.route.name)
            ? { runExample: (name: string, version: number | null) => void this.runExample(name, version) }
            : {}),
          tryExample: () => void app.tryExample(),
          exportAdapter: (id) => {
            app.router.go({ page: 'adapters', id });
            // The form is on the adapter's panel: focus its folder field once the panel shows it.
            const until = Date.now() + 5000;
            const focus = () => {
              const field = document.querySelector<HTMLInputElement>('[data-testid="export-dir"]');
              if (field) {
                field.scrollIntoView({ block: 'center' });
                field.focus();
              } else if (Date.now() < until) setTimeout(focus, 100);
            };
            focus();
          },
          setTheme: (choice) => this.theme.set(choice),
          showShortcuts: () => this.palette.show('shortcuts'),
        }),
      async () => (await studio.skills.list({})).map((s) => s.name).sort((a, b) => a.localeCompare(b)),
    );
  }

  /** The version a palette command acts on: the route's, else the skill's latest. */
  private async versionOf(name: string, version: number | null): Promise<number> {
    return version ?? (await studio.skills.get({ name })).version.version;
  }

  private async distil(name: string, version: number | null): Promise<void> {
    this.app.router.go({ page: 'skill', name, version, view: 'compare' });
    const ref = { name, version: await this.versionOf(name, version) };
    const run = this.app.lab(name).distill;
    await run.load(ref, null, true);
    if (!run.plan?.available) return; // the Distil panel says why
    run.mode = 'distilled';
    await run.start(ref);
  }

  private async compare(name: string, version: number | null): Promise<void> {
    this.app.router.go({ page: 'skill', name, version, view: 'compare' });
    const compare = this.app.lab(name).compare;
    if (compare.prompt.trim()) {
      await compare.start({ name, version: await this.versionOf(name, version) });
      return;
    }
    // No prompt yet: the compare page's prompt field asks for one.
    const until = Date.now() + 5000;
    const focus = () => {
      const field = document.querySelector<HTMLTextAreaElement>('[data-testid="compare-prompt"]');
      if (field) field.focus();
      else if (Date.now() < until) setTimeout(focus, 100);
    };
    focus();
  }

  private async runExample(name: string, version: number | null): Promise<void> {
    this.app.router.go({ page: 'skill', name, version, view: 'compare' });
    await this.app.example.run(this.app.lab(name), { name, version: await this.versionOf(name, version) });
  }

  start(): () => void {
    const stopTheme = this.theme.start();
    // Capture phase: Monaco binds Ctrl+K as a chord prefix; the palette key must reach us first.
    const onKey = (e: KeyboardEvent) => {
      if (!isPaletteKey(e)) return;
      e.preventDefault();
      e.stopPropagation();
      this.palette.toggle();
    };
    const onDragOver = (e: DragEvent) => {
      if (!carriesFiles(e.dataTransfer ? [...e.dataTransfer.types] : null)) return;
      e.preventDefault(); // allow the drop (and stop the browser from opening the file)
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
      this.dragging = true;
    };
    const onDragLeave = (e: DragEvent) => {
      if (e.relatedTarget === null) this.dragging = false; // left the window, not just a child
    };
    const onDrop = (e: DragEvent) => {
      if (!carriesFiles(e.dataTransfer ? [...e.dataTransfer.types] : null)) return;
      e.preventDefault();
      this.dragging = false;
      void this.drop(e.dataTransfer!);
    };
    window.addEventListener('keydown', onKey, true);
    window.addEventListener('dragenter', onDragOver);
    window.addEventListener('dragover', onDragOver);
    window.addEventListener('dragleave', onDragLeave);
    window.addEventListener('drop', onDrop);
    return () => {
      stopTheme();
      window.removeEventListener('keydown', onKey, true);
      window.removeEventListener('dragenter', onDragOver);
      window.removeEventListener('dragover', onDragOver);
      window.removeEventListener('dragleave', onDragLeave);
      window.removeEventListener('drop', onDrop);
    };
  }

  /** Imports a dropped folder or .tgz: by path under Electron, by its bytes in a browser tab. */
  async drop(data: DataTransfer): Promise<void> {
    // Read everything now: a DataTransfer's items are emptied once the drop event returns.
    const files: File[] = [];
    const items: DroppedItem[] = [];
    const dirs: (FileSystemDirectoryEntry | null)[] = [];
    for (const item of data.items) {
      const file = item.kind === 'file' ? item.getAsFile() : null;
      if (!file) continue;
      const entry = item.webkitGetAsEntry();
      files.push(file);
      items.push({
        name: file.name,
        kind: entry ? (entry.isDirectory ? 'directory' : 'file') : 'unknown',
        size: file.size,
        path: window.studioWindow?.pathForFile(file) ?? null,
      });
      dirs.push(entry?.isDirectory ? (entry as FileSystemDirectoryEntry) : null);
    }
    // A folder's names tell a PEFT adapter from skills (the entries stay readable after the event).
    for (const [i, dir] of dirs.entries()) if (dir) items[i]!.peft = isPeftListing(await topLevelNames(dir));
    const plan = planDrop(items);
    if (plan.action === 'import-adapter') return this.importAdapter(plan.path);
    const run = this.app.importRun;
    if (run.running) {
      this.dropMessage = 'An import is already running: wait for it to finish or cancel it, then drop again.';
      return;
    }
    if (plan.action === 'refuse') {
      this.dropMessage = plan.message;
      return;
    }
    this.dropMessage = null;
    this.app.openImport();
    if (plan.action === 'import-path') {
      run.source = plan.path;
      await run.start();
    } else {
      const bytes = new Uint8Array(await files[plan.index]!.arrayBuffer());
      await run.upload(plan.fileName, toBase64(bytes));
    }
  }

  /** A dropped PEFT folder (Electron: by path) through adapters.import; the Adapters page opens on it. */
  private async importAdapter(dir: string): Promise<void> {
    this.dropMessage = null;
    try {
      const { adapter } = await studio.adapters.import({ dir });
      void this.app.adapters.refresh();
      this.app.router.go({ page: 'adapters', id: adapter.id });
    } catch (err) {
      this.dropMessage = `The PEFT folder was not imported: ${friendlyError(toUiError(err)).summary}`;
    }
  }
}

/** The names at the top of a dropped folder (one readEntries batch: enough to spot adapter_config.json). */
function topLevelNames(dir: FileSystemDirectoryEntry): Promise<string[]> {
  return new Promise((resolve) =>
    dir.createReader().readEntries(
      (entries) => resolve(entries.map((e) => e.name)),
      () => resolve([]),
    ),
  );
}
