// The window's theme as reactive state for the toggle and the palette; ThemeController (theme.ts)
// does the work. Made once by StudioApp, before the first render.
import { ThemeController, type Theme, type ThemeChoice } from './theme';
import type { KeyValueStore } from '../shared/drafts';

export class ThemeState {
  choice = $state<ThemeChoice>('system');
  theme = $state<Theme>('light');
  private readonly controller: ThemeController;

  constructor(storage: KeyValueStore | null) {
    const query = typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;
    this.controller = new ThemeController(storage, query, document.documentElement, (choice, theme) => {
      this.choice = choice;
      this.theme = theme;
    });
  }

  set(choice: ThemeChoice): void {
    this.controller.set(choice);
  }

  cycle(): ThemeChoice {
    return this.controller.cycle();
  }

  start(): () => void {
    return this.controller.listen();
  }
}
