// The slice of Monaco the studio uses: the core editor, the features an author needs, and two
// Monarch grammars (markdown, yaml). Importing everything from 'monaco-editor' would pull in ~80
// languages and the TypeScript/CSS/HTML/JSON workers. This module is only reached through a
// dynamic import from Edit mode, so none of it is in the main bundle.
import * as monaco from 'monaco-editor/editor';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import 'monaco-editor/features/bracketMatching/register';
import 'monaco-editor/features/clipboard/register';
import 'monaco-editor/features/codicon/register';
import 'monaco-editor/features/comment/register';
import 'monaco-editor/features/contextmenu/register';
import 'monaco-editor/features/cursorUndo/register';
import 'monaco-editor/features/find/register';
import 'monaco-editor/features/folding/register';
import 'monaco-editor/features/gotoError/register';
import 'monaco-editor/features/hover/register';
import 'monaco-editor/features/indentation/register';
import 'monaco-editor/features/linesOperations/register';
import 'monaco-editor/features/multicursor/register';
import 'monaco-editor/features/smartSelect/register';
import 'monaco-editor/features/wordHighlighter/register';
import 'monaco-editor/features/wordOperations/register';
import 'monaco-editor/languages/definitions/markdown/register';
import 'monaco-editor/languages/definitions/yaml/register';
import {
  conf as markdownConf,
  language as markdownLanguage,
} from 'monaco-editor/languages/definitions/markdown/markdown';
import { monacoThemeOf } from '../settings/theme';

export { monaco };

export const SKILL_LANGUAGE = 'skill-md';
let ready = false;

/** Worker wiring and the SKILL.md grammar; idempotent. */
export function ensureMonaco(): void {
  if (ready) return;
  ready = true;
  // Markdown and YAML are Monarch grammars tokenized on the main thread; the editor worker is the
  // only one needed (diffs, word ranges, links).
  self.MonacoEnvironment = { getWorker: () => new EditorWorker() };
  monaco.languages.register({ id: SKILL_LANGUAGE, aliases: ['SKILL.md'] });
  monaco.languages.setLanguageConfiguration(SKILL_LANGUAGE, markdownConf);
  monaco.languages.setMonarchTokensProvider(SKILL_LANGUAGE, skillGrammar());
  // Monaco's theme is global: follow <html data-theme> (ThemeController writes it) for every editor.
  new MutationObserver(() => monaco.editor.setTheme(pageMonacoTheme())).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ['data-theme'],
  });
}

/** Monaco's built-in theme for the page's current light or dark theme. */
export function pageMonacoTheme(): 'vs' | 'vs-dark' {
  return monacoThemeOf(document.documentElement.dataset.theme === 'dark' ? 'dark' : 'light');
}

/**
 * Markdown with YAML frontmatter: if line 1 is `---`, everything up to the next `---` line is
 * handed to the yaml grammar (Monarch embedding), then the markdown grammar takes over.
 */
function skillGrammar(): monaco.languages.IMonarchLanguage {
  return {
    ...markdownLanguage,
    start: 'frontmatterStart',
    tokenizer: {
      ...markdownLanguage.tokenizer,
      frontmatterStart: [
        [/^---\s*$/, { token: 'metatag', switchTo: '@frontmatter', nextEmbedded: 'yaml' }],
        [/(?:)/, { token: '@rematch', switchTo: '@root' }],
      ],
      frontmatter: [[/^---\s*$/, { token: 'metatag', switchTo: '@root', nextEmbedded: '@pop' }]],
    },
  };
}
