// The Adapters page's Delete and Import as reactive state: the plain classes of adapter-actions.ts over
// the studio API, their snapshots made reactive.
import type { AdapterSummary, AdapterWritten } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import {
  AdapterImporter,
  AdapterRemoval,
  type Dependents,
  type ImportSnapshot,
  type RemovalSnapshot,
} from './adapter-actions';

export class AdapterDelete {
  state = $state.raw<RemovalSnapshot>(null as unknown as RemovalSnapshot);
  private readonly removal: AdapterRemoval;

  constructor(onDeleted: (id: string) => void) {
    this.removal = new AdapterRemoval(studio, (s) => (this.state = s), onDeleted);
    this.state = this.removal.snapshot;
  }

  ask = (target: AdapterSummary, dependents: Dependents): void => this.removal.ask(target, dependents);
  close = (): void => this.removal.close();
  confirm = (): Promise<boolean> => this.removal.confirm();
}

export class AdapterImport {
  state = $state.raw<ImportSnapshot>(null as unknown as ImportSnapshot);
  open = $state(false);
  private readonly importer: AdapterImporter;

  constructor(onImported: (written: AdapterWritten) => void) {
    this.importer = new AdapterImporter(studio, (s) => (this.state = s), onImported);
    this.state = this.importer.snapshot;
  }

  setDir = (dir: string): void => this.importer.setDir(dir);
  run = (dir?: string): Promise<boolean> => this.importer.run(dir);
}
