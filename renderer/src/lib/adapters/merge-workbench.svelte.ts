// The merge workbench's state for the Adapters page: the plain MergeWorkbench (merge-workbench.ts)
// over the studio API, its snapshots made reactive, plus the picker's search and filter.
import type { AdapterSummary, MergeMethod } from '../../../../common/api/adapter-schemas';
import { studio } from '../shared/bridge';
import { MergeWorkbench, type WorkbenchSnapshot } from './merge-workbench';

export class Workbench {
  state = $state.raw<WorkbenchSnapshot>(null as unknown as WorkbenchSnapshot);
  query = $state('');
  kind = $state('all');
  open = $state(false);

  private readonly bench: MergeWorkbench;

  /** onSaved: a merge was stored (the library list follows). */
  constructor(onSaved: (adapter: AdapterSummary) => void) {
    this.bench = new MergeWorkbench(studio, (s) => (this.state = s), onSaved);
    this.state = this.bench.snapshot;
  }

  has = (id: string): boolean => this.state.picks.some((p) => p.id === id);
  toggle = (a: AdapterSummary): void => this.bench.toggle(a);
  setWeight = (id: string, w: number): void => this.bench.setWeight(id, w);
  setMethod = (m: MergeMethod): void => this.bench.setMethod(m);
  setRank = (r: number): void => this.bench.setRank(r);
  setRehearse = (n: number): void => this.bench.setRehearse(n);
  setName = (n: string): void => this.bench.setName(n);
  clear = (): void => this.bench.clear();
  preview = (): Promise<boolean> => this.bench.preview();
  save = (): Promise<boolean> => this.bench.save();
  cancel = (): void => this.bench.cancel();
}
