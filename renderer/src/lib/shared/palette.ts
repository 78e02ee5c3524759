// The command palette's pure parts: the commands, the filter that ranks them against what was typed,
// the keyboard selection and the documented shortcuts. palette-commands.ts builds the list from the
// app; the component only renders and forwards keys.

export type PaletteGroup = 'Go to' | 'Actions' | 'Theme' | 'Skills';

export interface PaletteCommand {
  id: string;
  title: string;
  group: PaletteGroup;
  /** Extra words the filter matches (not shown). */
  keywords?: string;
  /** A shortcut shown on the row, e.g. 'Ctrl+K'. */
  shortcut?: string;
  run(): void;
}

/** Most rows shown: the palette lists 1,000 skills when nothing is typed otherwise. */
export const MAX_RESULTS = 50;

/**
 * How well `query` matches `text` (lower case both): 0 = no match. Whole-text prefix beats a word
 * prefix beats a substring beats the letters in order (a subsequence, like "gtpl" → "Go to Playground";
 * only for 3 letters or more, where it stops matching nearly everything).
 */
export function matchScore(text: string, query: string): number {
  if (query === '') return 1;
  if (text.startsWith(query)) return 4;
  if (text.includes(` ${query}`) || text.includes(`-${query}`) || text.includes(`/${query}`)) return 3;
  if (text.includes(query)) return 2;
  if (query.length < 3) return 0;
  let at = 0;
  for (const ch of query) {
    at = text.indexOf(ch, at);
    if (at < 0) return 0;
    at += 1;
  }
  return 1;
}

/**
 * The commands matching every word of `query` (in the title or the keywords), best first; ties keep
 * the list's order (Go to, Actions, Theme, then skills A–Z). At most `limit` rows.
 */
export function filterCommands(
  commands: readonly PaletteCommand[],
  query: string,
  limit = MAX_RESULTS,
): PaletteCommand[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return commands.slice(0, limit);
  const scored: { command: PaletteCommand; score: number; index: number }[] = [];
  commands.forEach((command, index) => {
    const title = command.title.toLowerCase();
    const extra = command.keywords?.toLowerCase() ?? '';
    let score = 0;
    for (const word of words) {
      // The title counts double: a word in the title beats the same word only in the keywords.
      const s = Math.max(2 * matchScore(title, word), extra ? matchScore(extra, word) : 0);
      if (s === 0) return;
      score += s;
    }
    scored.push({ command, score, index });
  });
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  return scored.slice(0, limit).map((s) => s.command);
}

/** The highlighted row after ↑ (−1), ↓ (+1), Home or End; wraps around; −1 when the list is empty. */
export function moveSelection(index: number, delta: number, length: number): number {
  if (length === 0) return -1;
  if (index < 0) return delta < 0 ? length - 1 : 0;
  return (((index + delta) % length) + length) % length;
}

/** Ctrl+K on Windows and Linux, ⌘K on macOS (and either anywhere, as VS Code and Slack accept). */
export function isPaletteKey(e: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }): boolean {
  return e.key.toLowerCase() === 'k' && (e.ctrlKey || e.metaKey) && !e.altKey;
}

export interface Shortcut {
  keys: string;
  action: string;
}

/** Every keyboard shortcut in the studio: shown in the palette's "Keyboard shortcuts" and docs/guide.md. */
export const SHORTCUTS: readonly Shortcut[] = [
  { keys: 'Ctrl+K / ⌘K', action: 'Open or close the command palette' },
  { keys: '↑ ↓, Enter', action: 'Palette: move through the commands, run the highlighted one' },
  { keys: 'Esc', action: 'Close the palette or a dialog' },
  { keys: 'Ctrl+S / ⌘S', action: 'Save the skill in the editor' },
  { keys: 'Ctrl+Enter / ⌘Enter', action: 'Generate (Playground) or run the comparison (Compare)' },
  { keys: 'Drop a folder or .tgz', action: 'Import the skills in it' },
];
