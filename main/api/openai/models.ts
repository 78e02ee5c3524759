// Which `model` names the endpoint serves and what each runs: `base`, and `global` once the current
// bundle has a global adapter version; compiled skills (`base:<skill>@<version>`) come with compile.
import type { EngineAdapter } from '../../engine';
import type { AdapterService } from '../services/adapter-service';

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

/** `base` plus `global` (the EMA global adapter's newest version) when the current bundle has one. */
export class LibraryCatalog implements ModelCatalog {
  private readonly base = new BaseOnlyCatalog();

  constructor(private readonly adapters: Pick<AdapterService, 'globalHead' | 'globalAdapter'>) {}

  async list(): Promise<ModelEntry[]> {
    const head = await this.adapters.globalHead();
    const global = head ? [{ id: 'global', created: Math.floor(Date.parse(head.createdAt) / 1000) }] : [];
    return [...(await this.base.list()), ...global];
  }

  async resolve(id: string): Promise<EngineAdapter | null | undefined> {
    if (id !== 'global') return this.base.resolve(id);
    return (await this.adapters.globalAdapter()) ?? undefined;
  }
}
