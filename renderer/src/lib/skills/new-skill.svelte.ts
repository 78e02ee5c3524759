// The New skill dialog's state, kept by StudioApp (the Library's buttons and the palette open it): the
// name typed, its problem under the field, and the create call (new-skill.ts) while it runs.
import type { StudioApi } from '../../../../common/api/contract';
import type { UiError } from '../shared/errors';
import { createSkill, newSkillNameProblem } from './new-skill';

export class NewSkillDialog {
  open = $state(false);
  name = $state('');
  creating = $state(false);
  /** The studio's refusal: `field` says whether it is about the name (shown under the field). */
  refusal = $state.raw<{ field: 'name' | null; error: UiError } | null>(null);
  /** Problems show once something was typed or Create was pressed, not on an empty new dialog. */
  private touched = $state(false);

  /** onCreated: version 1 exists; the caller refreshes the Library and opens the editor. */
  constructor(
    private readonly api: Pick<StudioApi, 'skills'>,
    private readonly onCreated: (name: string) => void,
  ) {}

  /** What is wrong with the name, for the line under the field; null when nothing (yet). */
  get nameError(): string | null {
    if (this.refusal?.field === 'name') return this.refusal.error.message;
    return this.touched ? newSkillNameProblem(this.name) : null;
  }

  show(): void {
    this.open = true;
    this.name = '';
    this.touched = false;
    this.refusal = null;
  }

  close(): void {
    if (!this.creating) this.open = false;
  }

  setName(name: string): void {
    this.name = name;
    this.touched = true;
    this.refusal = null;
  }

  async create(): Promise<void> {
    if (this.creating) return;
    this.touched = true;
    if (newSkillNameProblem(this.name)) return;
    this.creating = true;
    this.refusal = null;
    try {
      const outcome = await createSkill(this.api, this.name);
      if (outcome.ok) {
        this.open = false;
        this.onCreated(outcome.name);
      } else {
        this.refusal = { field: outcome.field, error: outcome.error };
      }
    } finally {
      this.creating = false;
    }
  }
}
