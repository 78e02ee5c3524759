// What the merge visualizer shows for one adapter, fetched in one go: adapters.visualize (rank slots,
// blocks, spectra), adapters.get (‖ΔW‖ per target for the heatmap) and, for a merge of two or more
// sources, adapters.similarity of the sources with the merge's weights (cosine matrix, linear vs cat).
import type { AdapterDetail, AdapterVisual, SimilarityResult } from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import { toUiError, type UiError } from '../shared/errors';

export interface VisualData {
  id: string;
  detail: AdapterDetail;
  visual: AdapterVisual;
  /** null: the adapter is not a merge of 2–16 sources */
  similarity: SimilarityResult | null;
}

/** The sources and weights to compare: a merge's, or an EMA step's (previous global, new adapter). */
export function sourcesOf(detail: AdapterDetail): { ids: string[]; weights: number[] } | null {
  const r = detail.recipe;
  if (r.kind === 'merge') return { ids: r.sources.map((k) => k.slice(0, 12)), weights: r.weights };
  if (r.kind === 'ema' && r.sources[0] !== null)
    return { ids: [r.sources[0].slice(0, 12), r.sources[1].slice(0, 12)], weights: [1 - r.beta, r.beta] };
  return null;
}

export async function loadVisual(api: Pick<StudioApi, 'adapters'>, id: string): Promise<VisualData> {
  const [detail, visual] = await Promise.all([api.adapters.get({ id }), api.adapters.visualize({ id })]);
  const src = sourcesOf(detail);
  const similarity = src && src.ids.length >= 2 && src.ids.length <= 16 ? await api.adapters.similarity(src) : null;
  return { id, detail, visual, similarity };
}

/** Loads one adapter's charts at a time; a later load wins over an earlier one still running. */
export class VisualLoader {
  private seq = 0;
  constructor(
    private readonly api: Pick<StudioApi, 'adapters'>,
    private readonly onChange: (s: { data: VisualData | null; error: UiError | null; loading: boolean }) => void,
  ) {}

  async load(id: string): Promise<void> {
    const seq = ++this.seq;
    this.onChange({ data: null, error: null, loading: true });
    try {
      const data = await loadVisual(this.api, id);
      if (seq === this.seq) this.onChange({ data, error: null, loading: false });
    } catch (err) {
      if (seq === this.seq) this.onChange({ data: null, error: toUiError(err), loading: false });
    }
  }

  clear(): void {
    this.seq++;
    this.onChange({ data: null, error: null, loading: false });
  }
}
