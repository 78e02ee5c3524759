// The merge visualizer's state on the Adapters page: VisualLoader (adapter-visual.ts) made reactive.
import { studio } from '../shared/bridge';
import { VisualLoader, type VisualData } from './adapter-visual';
import type { UiError } from '../shared/errors';

export class AdapterVisualizer {
  data = $state.raw<VisualData | null>(null);
  error = $state.raw<UiError | null>(null);
  loading = $state(false);

  private readonly loader = new VisualLoader(studio, (s) => {
    this.data = s.data;
    this.error = s.error;
    this.loading = s.loading;
  });

  load = (id: string): Promise<void> => this.loader.load(id);
  clear = (): void => this.loader.clear();
}
