// The command palette: ranking of what was typed, keyboard selection, the Ctrl/Cmd+K test, and the
// command list built from the window's state (pages, Import, Compile of the skill on screen, theme,
// one row per skill) running the right host call.
import { describe, expect, it } from 'vitest';
import {
  filterCommands,
  isPaletteKey,
  matchScore,
  moveSelection,
  SHORTCUTS,
  type PaletteCommand,
} from '../../../renderer/src/lib/shared/palette';
import { paletteCommands, type PaletteHost } from '../../../renderer/src/lib/shared/palette-commands';
import type { Route } from '../../../renderer/src/lib/shared/routes';

const cmd = (id: string, title: string, keywords?: string): PaletteCommand => ({
  id,
  title,
  group: 'Actions',
  keywords,
  run: () => {},
});

function host(route: Route, skills: string[] = []) {
  const calls: string[] = [];
  const h: PaletteHost = {
    route,
    skills,
    themeChoice: 'system',
    go: (r) => calls.push(`go ${JSON.stringify(r)}`),
    openImport: () => calls.push('import'),
    openNewSkill: () => calls.push('new-skill'),
    compile: (name, version) => calls.push(`compile ${name} ${version}`),
    distil: (name, version) => calls.push(`distil ${name} ${version}`),
    compare: (name, version) => calls.push(`compare ${name} ${version}`),
    tryExample: () => calls.push('try-example'),
    exportAdapter: (id) => calls.push(`export ${id}`),
    setTheme: (c) => calls.push(`theme ${c}`),
    showShortcuts: () => calls.push('shortcuts'),
  };
  return { h, calls };
}

describe('matchScore and filterCommands', () => {
  it('ranks prefix > word start > substring > letters in order, and 0 for no match', () => {
    expect(matchScore('go to playground', 'go')).toBe(4);
    expect(matchScore('go to playground', 'play')).toBe(3);
    expect(matchScore('review-prs', 'prs')).toBe(3);
    expect(matchScore('go to playground', 'ygr')).toBe(2);
    expect(matchScore('go to playground', 'gtpl')).toBe(1);
    expect(matchScore('go to playground', 'zz')).toBe(0);
    // Two letters in order are everywhere: no subsequence match below three.
    expect(matchScore('playground-notes', 'go')).toBe(0);
  });

  it('keeps commands whose title or keywords match every word, best first, ties in list order', () => {
    const list = [
      cmd('a', 'Go to Library', 'skills list'),
      cmd('b', 'Go to Playground', 'generate chat'),
      cmd('c', 'playground-notes'),
      cmd('d', 'Import skills…', 'npm folder tgz'),
    ];
    expect(filterCommands(list, '').map((c) => c.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(filterCommands(list, 'play').map((c) => c.id)).toEqual(['c', 'b']);
    expect(filterCommands(list, 'go play').map((c) => c.id)).toEqual(['b']);
    // Keywords match too, below a title match of the same word.
    expect(filterCommands(list, 'tgz').map((c) => c.id)).toEqual(['d']);
    expect(filterCommands(list, 'skills').map((c) => c.id)).toEqual(['d', 'a']);
    expect(filterCommands(list, 'nothing-like-this')).toEqual([]);
    expect(filterCommands(list, 'PLAY').map((c) => c.id)).toEqual(['c', 'b']);
  });

  it('caps the rows', () => {
    const many = Array.from({ length: 1000 }, (_, i) => cmd(`s${i}`, `skill-${i}`));
    expect(filterCommands(many, '')).toHaveLength(50);
    expect(filterCommands(many, 'skill', 10)).toHaveLength(10);
    expect(filterCommands(many, 'skill-999').map((c) => c.id)[0]).toBe('s999');
  });
});

describe('keyboard', () => {
  it('moves with wrap-around and handles an empty list', () => {
    expect(moveSelection(0, 1, 3)).toBe(1);
    expect(moveSelection(2, 1, 3)).toBe(0);
    expect(moveSelection(0, -1, 3)).toBe(2);
    expect(moveSelection(-1, -1, 3)).toBe(2);
    expect(moveSelection(-1, 1, 3)).toBe(0);
    expect(moveSelection(1, 1, 0)).toBe(-1);
  });

  it('opens on Ctrl+K and Cmd+K only', () => {
    const k = { key: 'k', ctrlKey: false, metaKey: false, altKey: false };
    expect(isPaletteKey({ ...k, ctrlKey: true })).toBe(true);
    expect(isPaletteKey({ ...k, metaKey: true })).toBe(true);
    expect(isPaletteKey({ ...k, key: 'K', ctrlKey: true })).toBe(true);
    expect(isPaletteKey(k)).toBe(false);
    expect(isPaletteKey({ ...k, ctrlKey: true, altKey: true })).toBe(false);
    expect(isPaletteKey({ ...k, key: 'j', ctrlKey: true })).toBe(false);
  });

  it('documents the palette key among the shortcuts', () => {
    expect(SHORTCUTS.some((s) => s.keys.includes('Ctrl+K') && /palette/.test(s.action))).toBe(true);
  });
});

describe('paletteCommands', () => {
  it('offers the pages, Import, New skill, the other theme choices and a row per skill; no Compile off a skill page', () => {
    const { h } = host({ page: 'library' }, ['alpha', 'beta']);
    const ids = paletteCommands(h).map((c) => c.id);
    expect(ids).toEqual([
      'go:library',
      'go:playground',
      'go:models',
      'go:adapters',
      'go:trajectories',
      'go:continual',
      'go:settings',
      'import',
      'new-skill',
      'try-example',
      'shortcuts',
      'theme:light',
      'theme:dark',
      'skill:alpha',
      'skill:beta',
    ]);
  });

  it('compiles the skill on screen at its version, and opens a skill by name', () => {
    const { h, calls } = host({ page: 'skill', name: 'review-prs', version: 3, view: 'read' }, ['review-prs']);
    const commands = paletteCommands(h);
    const compile = commands.find((c) => c.id === 'compile')!;
    expect(compile.title).toBe('Compile review-prs@3');
    compile.run();
    filterCommands(commands, 'open review')[0]!.run();
    commands.find((c) => c.id === 'import')!.run();
    filterCommands(commands, 'new skill')[0]!.run();
    commands.find((c) => c.id === 'theme:dark')!.run();
    expect(calls).toEqual([
      'compile review-prs 3',
      `go ${JSON.stringify({ page: 'skill', name: 'review-prs', version: null, view: 'read' })}`,
      'import',
      'new-skill',
      'theme dark',
    ]);
  });

  it('runs commands, not only navigation: distil, compare, run the example, try an example, export', () => {
    const { h, calls } = host({ page: 'skill', name: 'brotro-mixtus', version: null, view: 'compare' });
    const commands = paletteCommands({ ...h, runExample: (n, v) => calls.push(`example ${n} ${v}`) });
    filterCommands(commands, 'distil')[0]!.run();
    filterCommands(commands, 'compare')[0]!.run();
    filterCommands(commands, 'run the example')[0]!.run();
    filterCommands(commands, 'example')
      .find((c) => c.id === 'try-example')!
      .run();
    const onAdapter = host({ page: 'adapters', id: '0123456789ab' });
    filterCommands(paletteCommands(onAdapter.h), 'export')[0]!.run();
    expect(calls).toEqual([
      'distil brotro-mixtus null',
      'compare brotro-mixtus null',
      'example brotro-mixtus null',
      'try-example',
    ]);
    expect(onAdapter.calls).toEqual(['export 0123456789ab']);
  });

  it('finds the theme commands by "toggle theme" and "dark"', () => {
    const { h } = host({ page: 'library' });
    const commands = paletteCommands(h);
    expect(filterCommands(commands, 'toggle theme').map((c) => c.id)).toEqual(['theme:light', 'theme:dark']);
    expect(filterCommands(commands, 'dark')[0]!.id).toBe('theme:dark');
  });
});
