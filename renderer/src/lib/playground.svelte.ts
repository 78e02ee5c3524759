// The Playground page's state, kept by StudioApp so a generation survives leaving the page:
// the engine's bundle, the form, and the current run.
import { EngineBundle } from './playground-bundle.svelte';
import { GenerationRun } from './playground-run.svelte';
import { GenerationSettings } from './playground-settings.svelte';

export class Playground {
  readonly bundle = new EngineBundle();
  readonly settings = new GenerationSettings();
  readonly run = new GenerationRun();
  /** Why the form cannot be sent (shown under the Generate button), or null. */
  formError = $state<string | null>(null);

  private opened = false;

  /** The page was shown: ask the engine what it holds, once. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    void this.bundle.refresh();
  }

  generate(): void {
    const check = this.settings.request();
    this.formError = check.ok ? null : check.message;
    if (check.ok) void this.run.start(check.input);
  }

  dispose(): void {
    this.run.stop();
  }
}
