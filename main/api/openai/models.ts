// Which `model` names the endpoint serves and what each runs: for now the base model only;
// compiled skills (`base:<skill>@<version>`) and `global` arrive with the adapter library.
import type { EngineAdapter } from '../../engine';

export interface ModelEntry {
  id: string;
  created: number; // unix seconds
}

export interface ModelCatalog {
  list(): Promise<ModelEntry[]>;
  /** The adapter a model name runs with (null = none), or undefined when there is no such model. */
  resolve(id: string): Promise<EngineAdapter | null | undefined>;
}

export class BaseOnlyCatalog implements ModelCatalog {
  private readonly created = Math.floor(Date.now() / 1000);

  async list(): Promise<ModelEntry[]> {
    return [{ id: 'base', created: this.created }];
  }

  async resolve(id: string): Promise<EngineAdapter | null | undefined> {
    return id === 'base' ? null : undefined;
  }
}
