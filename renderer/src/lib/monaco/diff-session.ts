// Monaco's diff editor on two SKILL.md texts, read-only on both sides. The diff itself is computed in
// the editor worker that ensureMonaco wires; `onStats` gets the line counts each time it finishes.
import { lineChangeStats, type DiffStats } from '../skills/diff-stats';
import { ensureMonaco, monaco, pageMonacoTheme, SKILL_LANGUAGE } from './monaco';

export interface DiffSession {
  setTexts(original: string, modified: string): void;
  setSideBySide(sideBySide: boolean): void;
  dispose(): void;
}

export function createDiffSession(
  host: HTMLElement,
  options: { sideBySide: boolean; onStats(stats: DiffStats): void },
): DiffSession {
  ensureMonaco();
  const original = monaco.editor.createModel('', SKILL_LANGUAGE);
  const modified = monaco.editor.createModel('', SKILL_LANGUAGE);
  const editor = monaco.editor.createDiffEditor(host, {
    theme: pageMonacoTheme(),
    readOnly: true,
    originalEditable: false,
    automaticLayout: true,
    renderSideBySide: options.sideBySide,
    useInlineViewWhenSpaceIsLimited: false,
    minimap: { enabled: false },
    wordWrap: 'on',
    diffWordWrap: 'on',
    fontSize: 13,
    lineHeight: 20,
    scrollBeyondLastLine: false,
    renderOverviewRuler: true,
    fixedOverflowWidgets: true,
    ignoreTrimWhitespace: false,
    ariaLabel: 'Differences between two versions of SKILL.md',
  });
  editor.setModel({ original, modified });
  const updates = editor.onDidUpdateDiff(() => options.onStats(lineChangeStats(editor.getLineChanges() ?? [])));

  return {
    setTexts(a, b) {
      original.setValue(a);
      modified.setValue(b);
    },
    setSideBySide(sideBySide) {
      editor.updateOptions({ renderSideBySide: sideBySide });
    },
    dispose() {
      updates.dispose();
      editor.dispose();
      original.dispose();
      modified.dispose();
    },
  };
}
