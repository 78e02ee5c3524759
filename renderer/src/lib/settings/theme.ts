// Light, dark or "follow the OS". The choice is kept in the window's localStorage, not in the studio's
// settings: it must be known synchronously before the first paint (no flash of the wrong theme while an
// API call is in flight), and it belongs to the window, not to the data folder that several browser
// tabs or a CLI may share. Pure: storage, the OS query and the page root are passed in, so unit tests
// drive it without a DOM.
import type { KeyValueStore } from '../shared/drafts';

export type ThemeChoice = 'light' | 'dark' | 'system';
export type Theme = 'light' | 'dark';

export const THEME_KEY = 'pskills.theme';
export const THEME_CHOICES: readonly ThemeChoice[] = ['light', 'dark', 'system'];

/** The stored choice; anything unknown (or nothing) means "follow the OS". */
export function parseChoice(raw: string | null | undefined): ThemeChoice {
  return raw === 'light' || raw === 'dark' || raw === 'system' ? raw : 'system';
}

export function resolveTheme(choice: ThemeChoice, systemDark: boolean): Theme {
  if (choice === 'system') return systemDark ? 'dark' : 'light';
  return choice;
}

/** The toggle's order: light → dark → system → light. */
export function nextChoice(choice: ThemeChoice): ThemeChoice {
  return THEME_CHOICES[(THEME_CHOICES.indexOf(choice) + 1) % THEME_CHOICES.length]!;
}

export function monacoThemeOf(theme: Theme): 'vs' | 'vs-dark' {
  return theme === 'dark' ? 'vs-dark' : 'vs';
}

/** The part of MediaQueryList used: `(prefers-color-scheme: dark)`. */
export interface DarkQuery {
  matches: boolean;
  addEventListener(type: 'change', fn: (e: { matches: boolean }) => void): void;
  removeEventListener(type: 'change', fn: (e: { matches: boolean }) => void): void;
}

/** Where the resolved theme is written: <html data-theme="…">, which app.css keys its colours on. */
export interface ThemeRoot {
  dataset: Record<string, string | undefined>;
}

export class ThemeController {
  private choiceValue: ThemeChoice;
  private systemDark: boolean;
  private readonly onSystem = (e: { matches: boolean }) => {
    this.systemDark = e.matches;
    this.apply();
  };

  constructor(
    private readonly storage: KeyValueStore | null,
    private readonly query: DarkQuery | null,
    private readonly root: ThemeRoot,
    private readonly onChange: (choice: ThemeChoice, theme: Theme) => void = () => {},
  ) {
    this.choiceValue = parseChoice(this.read());
    this.systemDark = query?.matches ?? false;
    this.apply();
  }

  get choice(): ThemeChoice {
    return this.choiceValue;
  }

  get theme(): Theme {
    return resolveTheme(this.choiceValue, this.systemDark);
  }

  set(choice: ThemeChoice): void {
    this.choiceValue = choice;
    try {
      this.storage?.setItem(THEME_KEY, choice);
    } catch {
      // Storage full or switched off: the choice still holds for this window.
    }
    this.apply();
  }

  cycle(): ThemeChoice {
    this.set(nextChoice(this.choiceValue));
    return this.choiceValue;
  }

  /** Follows the OS setting while the choice is "system"; returns the function that stops it. */
  listen(): () => void {
    this.query?.addEventListener('change', this.onSystem);
    return () => this.query?.removeEventListener('change', this.onSystem);
  }

  private read(): string | null {
    try {
      return this.storage?.getItem(THEME_KEY) ?? null;
    } catch {
      return null;
    }
  }

  private apply(): void {
    this.root.dataset.theme = this.theme;
    this.onChange(this.choiceValue, this.theme);
  }
}
