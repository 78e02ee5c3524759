// The Models page's state, kept by StudioApp so a running create survives leaving the page: the plain
// ModelShelf (models.ts) over the studio API, its snapshots made reactive, and the add form's fields.
import type { StudioApi } from '../../../../common/api/contract';
import type { LocalModel } from '../../../../common/api/model-schemas';
import { emptyForm, formFor, ModelShelf, type CreateForm, type ModelsSnapshot } from './models';

export class ModelsPage {
  state = $state.raw<ModelsSnapshot>(null as unknown as ModelsSnapshot);
  form = $state<CreateForm>(emptyForm());

  private readonly shelf: ModelShelf;

  constructor(api: Pick<StudioApi, 'models'>) {
    this.shelf = new ModelShelf(api, (s) => (this.state = s));
    this.state = this.shelf.snapshot;
  }

  get creating(): boolean {
    return this.state.createStatus === 'running';
  }

  refresh(): Promise<void> {
    return this.shelf.refresh();
  }

  activate(dir: string): Promise<void> {
    return this.shelf.activate(dir);
  }

  create(): Promise<void> {
    return this.shelf.create($state.snapshot(this.form));
  }

  /** Fills the form with a GGUF found in LM Studio's or Ollama's folder and imports it. */
  importFound(m: LocalModel): Promise<void> {
    this.form = formFor(m);
    return this.create();
  }

  cancel(): void {
    this.shelf.cancel();
  }
}
