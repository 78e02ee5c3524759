// One skill as the Skill page shows it: the chosen version (latest by default) and, in Edit mode,
// the editor session that outlives version switches of the same skill.
import type { SkillDetail } from '../../../../common/api/skill-schemas';
import { studio } from '../shared/bridge';
import type { DraftStore } from '../shared/drafts';
import type { UiError } from '../shared/errors';
import { Latest } from '../shared/latest';
import { skillFolderName } from './provenance';
import { SkillEditor } from './skill-editor.svelte';

export class SkillPage {
  detail = $state.raw<SkillDetail | null>(null);
  loading = $state(false);
  error = $state.raw<UiError | null>(null);
  editor = $state.raw<SkillEditor | null>(null);
  /** An unsaved draft of the skill is kept (shown on the Edit button while the editor is closed). */
  hasDraft = $state(false);

  private readonly latest = new Latest();

  constructor(
    private readonly onSaved: () => void,
    private readonly drafts: DraftStore,
  ) {}

  get latestVersion(): number | null {
    const history = this.detail?.history ?? [];
    return history.length ? Math.max(...history.map((v) => v.version)) : null;
  }

  async load(name: string, version: number | null): Promise<void> {
    if (this.detail && this.detail.name !== name) this.closeEditor();
    await this.latest.run(() => studio.skills.get(version === null ? { name } : { name, version }), {
      busy: (on) => (this.loading = on),
      keep: (detail) => {
        this.detail = detail;
        this.hasDraft = this.drafts.get(detail.name) !== null;
        this.error = null;
      },
      fail: (error) => {
        this.detail = null;
        this.error = error;
      },
    });
  }

  /** Starts (or keeps) an editor on the version being shown. */
  openEditor(): void {
    const detail = this.detail;
    if (!detail || this.editor?.name === detail.name) return;
    this.editor = new SkillEditor({
      name: detail.name,
      content: detail.content,
      parsed: detail.parsed,
      folderName: skillFolderName(detail.version.provenance) ?? detail.name,
      onSaved: () => this.onSaved(),
      drafts: this.drafts,
      base: { version: detail.version.version, sha256: detail.version.sha256 },
    });
  }

  closeEditor(): void {
    const editor = this.editor;
    if (!editor) return;
    editor.dispose(); // writes a pending draft first
    this.editor = null;
    this.hasDraft = this.drafts.get(editor.name) !== null;
  }

  dispose(): void {
    this.latest.cancel();
    this.closeEditor();
  }
}
