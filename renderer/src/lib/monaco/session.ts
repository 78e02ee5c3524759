// One Monaco editor on one SKILL.md: text in, edits out, diagnostics shown as markers.
import type { Diagnostic } from '../../../../common/api/skill-schemas';
import { ensureMonaco, monaco, pageMonacoTheme, SKILL_LANGUAGE } from './monaco';

const MARKER_OWNER = 'pskills.validate';

export interface EditorSession {
  setDiagnostics(diagnostics: Diagnostic[]): void;
  revealLine(line: number): void;
  /** Replaces the whole text (one undoable edit); the change callback fires as for typing. */
  setValue(text: string): void;
  dispose(): void;
}

export interface EditorCallbacks {
  onChange(text: string): void;
  onSave(): void;
}

export function createEditorSession(host: HTMLElement, content: string, callbacks: EditorCallbacks): EditorSession {
  ensureMonaco();
  const model = monaco.editor.createModel(content, SKILL_LANGUAGE);
  const editor = monaco.editor.create(host, {
    model,
    theme: pageMonacoTheme(),
    automaticLayout: true,
    minimap: { enabled: false },
    wordWrap: 'on',
    fontSize: 13,
    lineHeight: 20,
    scrollBeyondLastLine: false,
    renderWhitespace: 'trailing',
    fixedOverflowWidgets: true,
    padding: { top: 8, bottom: 8 },
    ariaLabel: 'SKILL.md editor',
  });
  const changes = model.onDidChangeContent(() => callbacks.onChange(model.getValue()));
  editor.addCommand(monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS, () => callbacks.onSave());

  return {
    setDiagnostics(diagnostics) {
      monaco.editor.setModelMarkers(
        model,
        MARKER_OWNER,
        diagnostics.map((d) => toMarker(model, d)),
      );
    },
    revealLine(line) {
      const target = Math.min(Math.max(1, line), model.getLineCount());
      editor.revealLineInCenter(target);
      editor.setPosition({ lineNumber: target, column: 1 });
      editor.focus();
    },
    setValue(text) {
      model.pushEditOperations([], [{ range: model.getFullModelRange(), text }], () => null);
    },
    dispose() {
      changes.dispose();
      editor.dispose();
      model.dispose();
    },
  };
}

/** Diagnostic lines are 1-based lines of the file; without a column the whole line is marked. */
function toMarker(model: monaco.editor.ITextModel, d: Diagnostic): monaco.editor.IMarkerData {
  const lines = model.getLineCount();
  const startLineNumber = Math.min(Math.max(1, d.line), lines);
  const endLineNumber = Math.min(Math.max(startLineNumber, d.endLine ?? startLineNumber), lines);
  const firstText = model.getLineFirstNonWhitespaceColumn(startLineNumber) || 1;
  const startColumn = d.column ? Math.min(d.column, model.getLineMaxColumn(startLineNumber)) : firstText;
  let endColumn = model.getLineMaxColumn(endLineNumber);
  if (endLineNumber === startLineNumber && endColumn <= startColumn) endColumn = startColumn + 1;
  return {
    severity: d.severity === 'error' ? monaco.MarkerSeverity.Error : monaco.MarkerSeverity.Warning,
    message: d.field ? `${d.field}: ${d.message}` : d.message,
    code: d.code,
    source: 'pskills',
    startLineNumber,
    startColumn,
    endLineNumber,
    endColumn,
  };
}
