// Edit mode: the text, its live diagnostics from studio.skills.validate, saving, and the draft that
// keeps unsaved text across navigation, reloads and closing the window (drafts.ts). Owns the Monaco
// session (link/unlink) so the component stays a thin view, as in the svelte.dev REPL's Workspace
// class.
import type { Diagnostic, ParsedSkill, Section } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import { Debouncer } from '../shared/debounce';
import type { Draft, DraftStore } from '../shared/drafts';
import { toUiError, type UiError } from '../shared/errors';
import { MonacoHost } from '../monaco/monaco-host.svelte';
import type { EditorSession } from '../monaco/session';

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
  /** Where unsaved text is kept; a draft found there for this skill is restored. */
  drafts: DraftStore;
  /** The version the editor opens from (recorded with the draft). */
  base: { version: number; sha256: string };
}

export class SkillEditor extends MonacoHost<EditorSession> {
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
  /** The draft the editor opened with instead of the stored text, until it is saved or discarded. */
  restored = $state.raw<Draft | null>(null);

  errorCount = $derived(this.diagnostics.filter((d) => d.severity === 'error').length);
  warningCount = $derived(this.diagnostics.filter((d) => d.severity === 'warning').length);
  dirty = $derived(this.content !== this.baseline);
  canSave = $derived(this.errorCount === 0 && !this.saving && this.editorReady);

  private readonly folderName: string;
  private readonly onSaved: (outcome: SaveOutcome) => void;
  private readonly debounce = new Debouncer(300);
  private readonly draftWrite = new Debouncer(250);
  private readonly drafts: DraftStore;
  private base: { version: number; sha256: string };
  private validateSeq = 0;

  constructor(options: SkillEditorOptions) {
    super();
    this.name = options.name;
    this.content = options.content;
    this.baseline = options.content;
    this.diagnostics = options.parsed.diagnostics;
    this.sections = options.parsed.sections;
    this.folderName = options.folderName;
    this.onSaved = options.onSaved;
    this.drafts = options.drafts;
    this.base = options.base;
    const draft = this.drafts.get(this.name);
    if (draft && draft.content !== options.content) {
      this.content = draft.content;
      this.restored = draft;
    } else if (draft) this.drafts.remove(this.name); // nothing unsaved in it
    void this.validate();
  }

  protected async load(): Promise<(host: HTMLElement) => EditorSession> {
    const { createEditorSession } = await import('../monaco/session');
    return (host) => {
      const session = createEditorSession(host, this.content, {
        onChange: (text) => this.setContent(text),
        onSave: () => void this.save(),
      });
      session.setDiagnostics(this.diagnostics);
      return session;
    };
  }

  setContent(text: string): void {
    this.content = text;
    this.saved = null;
    this.debounce.schedule(() => void this.validate());
    this.draftWrite.schedule(() => this.writeDraft());
  }

  /** Writes the pending draft now (before the window unloads or the editor goes away). */
  flushDraft(): void {
    if (!this.draftWrite.pending) return;
    this.draftWrite.cancel();
    this.writeDraft();
  }

  /** Back to the stored text: the edits and their draft are dropped. */
  discard(): void {
    this.draftWrite.cancel();
    this.drafts.remove(this.name);
    this.restored = null;
    if (this.content === this.baseline) return;
    if (this.session)
      this.session.setValue(this.baseline); // its change event calls setContent
    else this.content = this.baseline;
    this.draftWrite.cancel(); // setContent scheduled a write of the (now clean) text: nothing to keep
    void this.validate();
  }

  private writeDraft(): void {
    if (this.content === this.baseline) this.drafts.remove(this.name);
    else this.drafts.put(this.name, this.content, this.base);
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

  /** Saves a new version; resolves true when the text on screen is now stored. */
  async save(): Promise<boolean> {
    if (!this.canSave) return false;
    this.debounce.cancel();
    const content = this.content;
    this.saving = true;
    this.saveError = null;
    try {
      const res = await studio.skills.save({ name: this.name, content });
      const current = content === this.content; // nothing typed while the request was out
      if (current) {
        this.draftWrite.cancel();
        this.drafts.remove(this.name);
      }
      if (this.disposed) return current;
      this.baseline = content;
      this.base = { version: res.version.version, sha256: res.version.sha256 };
      if (current) {
        this.applyParsed(res.parsed);
        this.restored = null;
      }
      const outcome = { version: res.version.version, created: res.created };
      this.saved = outcome;
      this.onSaved(outcome);
      return current;
    } catch (err) {
      this.saveError = toUiError(err);
      return false;
    } finally {
      this.saving = false;
    }
  }

  dispose(): void {
    this.flushDraft();
    this.disposed = true;
    this.debounce.dispose();
    this.draftWrite.dispose();
    this.unlink();
  }

  private applyParsed(parsed: ParsedSkill): void {
    this.diagnostics = parsed.diagnostics;
    this.sections = parsed.sections;
    this.session?.setDiagnostics(parsed.diagnostics);
  }
}
