// Edit mode: the text, its live diagnostics from studio.skills.validate, and saving. Owns the
// Monaco session (link/unlink) so the component stays a thin view, as in the svelte.dev REPL's
// Workspace class.
import type { Diagnostic, ParsedSkill, Section } from '../../../common/api/skill-schemas';
import { studio } from './bridge';
import { Debouncer } from './debounce';
import { toUiError, type UiError } from './errors';
import type { EditorSession } from './monaco/session';

export interface SaveOutcome {
  version: number;
  created: boolean;
}

export interface SkillEditorOptions {
  name: string;
  content: string;
  /** The studio's parse of `content`, shown until the first live validation answers. */
  parsed: ParsedSkill;
  folderName: string;
  onSaved: (outcome: SaveOutcome) => void;
}

export class SkillEditor {
  readonly name: string;
  content = $state('');
  /** The text as last saved (or as opened): dirty = content differs from it. */
  baseline = $state('');
  diagnostics = $state.raw<Diagnostic[]>([]);
  sections = $state.raw<Section[]>([]);
  validating = $state(false);
  validateError = $state.raw<UiError | null>(null);
  saving = $state(false);
  saveError = $state.raw<UiError | null>(null);
  saved = $state.raw<SaveOutcome | null>(null);
  editorReady = $state(false);
  editorError = $state.raw<UiError | null>(null);

  errorCount = $derived(this.diagnostics.filter((d) => d.severity === 'error').length);
  warningCount = $derived(this.diagnostics.filter((d) => d.severity === 'warning').length);
  dirty = $derived(this.content !== this.baseline);
  canSave = $derived(this.errorCount === 0 && !this.saving && this.editorReady);

  private readonly folderName: string;
  private readonly onSaved: (outcome: SaveOutcome) => void;
  private readonly debounce = new Debouncer(300);
  private session: EditorSession | null = null;
  private linkSeq = 0;
  private validateSeq = 0;
  private disposed = false;

  constructor(options: SkillEditorOptions) {
    this.name = options.name;
    this.content = options.content;
    this.baseline = options.content;
    this.diagnostics = options.parsed.diagnostics;
    this.sections = options.parsed.sections;
    this.folderName = options.folderName;
    this.onSaved = options.onSaved;
    void this.validate();
  }

  /** Mounts Monaco into `host`; Monaco's code is fetched on first use only. */
  async link(host: HTMLElement): Promise<void> {
    const seq = ++this.linkSeq;
    try {
      const { createEditorSession } = await import('./monaco/session');
      if (seq !== this.linkSeq || this.disposed) return;
      this.session = createEditorSession(host, this.content, {
        onChange: (text) => this.setContent(text),
        onSave: () => void this.save(),
      });
      this.session.setDiagnostics(this.diagnostics);
      this.editorReady = true;
      this.editorError = null;
    } catch (err) {
      if (seq === this.linkSeq) this.editorError = toUiError(err);
    }
  }

  unlink(): void {
    this.linkSeq++;
    this.session?.dispose();
    this.session = null;
    this.editorReady = false;
  }

  setContent(text: string): void {
    this.content = text;
    this.saved = null;
    this.debounce.schedule(() => void this.validate());
  }

  revealLine(line: number): void {
    this.session?.revealLine(line);
  }

  async validate(): Promise<void> {
    const seq = ++this.validateSeq;
    const content = this.content;
    this.validating = true;
    try {
      const parsed = await studio.skills.validate({ content, folderName: this.folderName });
      if (seq !== this.validateSeq || this.disposed) return;
      // Typed on since the request left: its lines are stale and a newer validation is queued.
      if (content !== this.content) return;
      this.applyParsed(parsed);
      this.validateError = null;
    } catch (err) {
      if (seq === this.validateSeq) this.validateError = toUiError(err);
    } finally {
      if (seq === this.validateSeq) this.validating = false;
    }
  }

  async save(): Promise<void> {
    if (!this.canSave) return;
    this.debounce.cancel();
    const content = this.content;
    this.saving = true;
    this.saveError = null;
    try {
      const res = await studio.skills.save({ name: this.name, content });
      if (this.disposed) return;
      this.baseline = content;
      if (content === this.content) this.applyParsed(res.parsed);
      const outcome = { version: res.version.version, created: res.created };
      this.saved = outcome;
      this.onSaved(outcome);
    } catch (err) {
      this.saveError = toUiError(err);
    } finally {
      this.saving = false;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.debounce.dispose();
    this.unlink();
  }

  private applyParsed(parsed: ParsedSkill): void {
    this.diagnostics = parsed.diagnostics;
    this.sections = parsed.sections;
    this.session?.setDiagnostics(parsed.diagnostics);
  }
}
