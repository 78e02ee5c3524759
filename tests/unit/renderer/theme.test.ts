// The theme controller: the stored choice (light / dark / system), the OS query followed only while
// the choice is "system", <html data-theme> written on every change, and storage that fails.
import { describe, expect, it } from 'vitest';
import type { KeyValueStore } from '../../../renderer/src/lib/shared/drafts';
import {
  monacoThemeOf,
  nextChoice,
  parseChoice,
  resolveTheme,
  THEME_KEY,
  ThemeController,
  type DarkQuery,
} from '../../../renderer/src/lib/settings/theme';

class MapStore implements KeyValueStore {
  readonly map = new Map<string, string>();
  broken = false;
  getItem(k: string): string | null {
    if (this.broken) throw new Error('SecurityError');
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    if (this.broken) throw new Error('QuotaExceededError');
    this.map.set(k, v);
  }
  removeItem(k: string): void {
    this.map.delete(k);
  }
}

class FakeQuery implements DarkQuery {
  readonly listeners = new Set<(e: { matches: boolean }) => void>();
  constructor(public matches: boolean) {}
  addEventListener(_: 'change', fn: (e: { matches: boolean }) => void): void {
    this.listeners.add(fn);
  }
  removeEventListener(_: 'change', fn: (e: { matches: boolean }) => void): void {
    this.listeners.delete(fn);
  }
  flip(matches: boolean): void {
    this.matches = matches;
    for (const fn of this.listeners) fn({ matches });
  }
}

describe('theme choice', () => {
  it('parses the stored value; anything else follows the system', () => {
    expect(parseChoice('dark')).toBe('dark');
    expect(parseChoice('light')).toBe('light');
    expect(parseChoice('system')).toBe('system');
    expect(parseChoice('Dark')).toBe('system');
    expect(parseChoice(null)).toBe('system');
  });

  it('resolves system from the OS and cycles light → dark → system', () => {
    expect(resolveTheme('system', true)).toBe('dark');
    expect(resolveTheme('system', false)).toBe('light');
    expect(resolveTheme('light', true)).toBe('light');
    expect([nextChoice('light'), nextChoice('dark'), nextChoice('system')]).toEqual(['dark', 'system', 'light']);
    expect(monacoThemeOf('dark')).toBe('vs-dark');
    expect(monacoThemeOf('light')).toBe('vs');
  });
});

describe('ThemeController', () => {
  it('applies the stored choice at construction and writes data-theme', () => {
    const store = new MapStore();
    store.map.set(THEME_KEY, 'dark');
    const root = { dataset: {} as Record<string, string | undefined> };
    const seen: string[] = [];
    const c = new ThemeController(store, new FakeQuery(false), root, (choice, theme) =>
      seen.push(`${choice}:${theme}`),
    );
    expect(c.choice).toBe('dark');
    expect(root.dataset.theme).toBe('dark');
    expect(seen).toEqual(['dark:dark']);
  });

  it('follows the OS while the choice is system, and stops following after listen() is undone', () => {
    const query = new FakeQuery(false);
    const root = { dataset: {} as Record<string, string | undefined> };
    const c = new ThemeController(new MapStore(), query, root);
    const stop = c.listen();
    expect(root.dataset.theme).toBe('light');
    query.flip(true);
    expect(root.dataset.theme).toBe('dark');
    c.set('light'); // an explicit choice wins over the OS
    query.flip(true);
    expect(root.dataset.theme).toBe('light');
    c.set('system');
    expect(root.dataset.theme).toBe('dark');
    stop();
    expect(query.listeners.size).toBe(0);
  });

  it('persists each choice and reads it back in a new window', () => {
    const store = new MapStore();
    const root = { dataset: {} as Record<string, string | undefined> };
    const c = new ThemeController(store, null, root);
    expect(c.choice).toBe('system');
    expect(c.cycle()).toBe('light');
    expect(c.cycle()).toBe('dark');
    expect(store.map.get(THEME_KEY)).toBe('dark');
    expect(new ThemeController(store, null, { dataset: {} }).choice).toBe('dark');
  });

  it('keeps working when storage throws (switched off or full)', () => {
    const store = new MapStore();
    store.broken = true;
    const root = { dataset: {} as Record<string, string | undefined> };
    const c = new ThemeController(store, new FakeQuery(true), root);
    expect(c.theme).toBe('dark');
    c.set('light');
    expect(c.choice).toBe('light');
    expect(root.dataset.theme).toBe('light');
  });
});
