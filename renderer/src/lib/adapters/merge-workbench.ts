// The merge workbench on the Adapters page: pick adapters (search and filter), set weights, method
// and rank, preview the result (adapters.mergePreview, and adapters.similarity of the picks for their
// cosine matrix) and save it (adapters.merge: with Rehearse, its steps stream in and Cancel stops it,
// storing nothing). Plain TypeScript with the API passed in, so tests drive
// it over the in-memory transport; merge-workbench.svelte.ts makes its snapshots reactive.
import {
  MAX_REHEARSE,
  type AdapterSummary,
  type MergeMethod,
  type MergePreview,
  type MergeProgress,
  type SimilarityResult,
} from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';
import type { StreamHandle } from '../../../../common/api/define';
import { adapterName, mergeNameOf, mergePart } from '../../../../common/adapters/name';
import { adapterOrigin } from './adapter-origin';
import { toUiError, type UiError } from '../shared/errors';

export interface MergePick {
  id: string;
  rank: number;
  weight: number;
  /** The adapter's name as lists show it (its id when not known). */
  label: string;
  /** How the merge's default name calls it (common/adapters/name.ts). */
  part: string;
  /** It comes from a skill version, so a rehearsal can practise that skill. */
  fromSkill: boolean;
}

export interface WorkbenchSnapshot {
  picks: MergePick[];
  method: MergeMethod;
  /** svd's target rank */
  rank: number;
  /** Distillation steps over every pick's skill after the merge (0: none; docs/distill.md). */
  rehearse: number;
  preview: MergePreview | null;
  similarity: SimilarityResult | null;
  /** What blocks a preview or a save, in words (null: nothing). */
  problem: string | null;
  busy: 'preview' | 'save' | null;
  saved: { adapter: AdapterSummary; created: boolean } | null;
  /** The running save's last progress (a rehearsal's step and loss), or null. */
  progress: MergeProgress | null;
  /** A save was cancelled (nothing was stored), or one is being cancelled. */
  cancel: 'cancelling' | 'cancelled' | null;
  error: UiError | null;
  /** The name typed for the merge ('' = the default made from its parts). */
  name: string;
}

/** The name a merge of these picks gets when none is typed. */
export function defaultMergeName(picks: readonly MergePick[], method: MergeMethod): string {
  return mergeNameOf(
    picks.map((p) => p.part),
    method,
  );
}

export interface AdapterFilter {
  query: string;
  /** an origin kind (import, merge, ema, compile) or 'all' */
  kind: string;
}

/** Adapters matching the search (id, skill, bundle, origin text) and the origin kind. */
export function filterAdapters(list: readonly AdapterSummary[], f: AdapterFilter): AdapterSummary[] {
  const words = f.query.toLowerCase().split(/\s+/).filter(Boolean);
  return list.filter((a) => {
    const origin = adapterOrigin(a);
    if (f.kind !== 'all' && origin.kind !== f.kind) return false;
    const text = [
      a.key,
      adapterName(a),
      a.skill ? `${a.skill.name}@${a.skill.version}` : '',
      a.bundle.id,
      origin.kind,
      origin.summary,
    ]
      .join(' ')
      .toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** Why these picks cannot be merged as asked, checked before any call; null when they can. */
export function mergeProblem(
  picks: readonly Pick<MergePick, 'id' | 'rank' | 'weight' | 'fromSkill'>[],
  method: MergeMethod,
  rank: number,
  rehearse = 0,
): string | null {
  if (picks.length < 2) return 'pick at least two adapters';
  const bad = picks.find((p) => !Number.isFinite(p.weight));
  if (bad) return `the weight of ${bad.id} is not a number`;
  if (method === 'svd' && !(Number.isInteger(rank) && rank >= 1 && rank <= 4096))
    return 'svd needs a target rank from 1 to 4096';
  if (method === 'linear' && new Set(picks.map((p) => p.rank)).size > 1)
    return `linear needs equal ranks; these have ${picks.map((p) => p.rank).join(', ')}`;
  if (!(Number.isInteger(rehearse) && rehearse >= 0 && rehearse <= MAX_REHEARSE))
    return `rehearse takes 0 to ${MAX_REHEARSE} steps`;
  const bare = rehearse > 0 ? picks.find((p) => !p.fromSkill) : undefined;
  if (bare) return `rehearsal practises each adapter's skill; ${bare.id} comes from no skill version`;
  return null;
}

export class MergeWorkbench {
  private s: WorkbenchSnapshot = {
    picks: [],
    method: 'cat',
    rank: 8,
    rehearse: 0,
    preview: null,
    similarity: null,
    problem: mergeProblem([], 'cat', 8),
    busy: null,
    saved: null,
    progress: null,
    cancel: null,
    error: null,
    name: '',
  };
  private seq = 0;
  private saving: StreamHandle<unknown> | null = null;

  constructor(
    private readonly api: Pick<StudioApi, 'adapters'>,
    private readonly onChange: (s: WorkbenchSnapshot) => void,
    private readonly onSaved: (adapter: AdapterSummary) => void = () => {},
  ) {}

  get snapshot(): WorkbenchSnapshot {
    return this.s;
  }

  has(id: string): boolean {
    return this.s.picks.some((p) => p.id === id);
  }

  /** Adds the adapter with weight 1, or removes it when picked. */
  toggle(a: Pick<AdapterSummary, 'id' | 'rank'> & Partial<Pick<AdapterSummary, 'name' | 'recipe' | 'skill'>>): void {
    const named = a.recipe ? { name: a.name ?? null, recipe: a.recipe, skill: a.skill ?? null } : null;
    const picks = this.has(a.id)
      ? this.s.picks.filter((p) => p.id !== a.id)
      : [
          ...this.s.picks,
          {
            id: a.id,
            rank: a.rank,
            weight: 1,
            label: named ? adapterName(named) : a.id,
            part: named ? mergePart(named) : a.id,
            fromSkill: Boolean(a.skill),
          },
        ];
    this.edit({ picks });
  }

  /** The merge's name ('' = the default made from its parts); the preview stays valid. */
  setName(name: string): void {
    if (this.s.busy === 'save') return;
    this.set({ name, saved: null });
  }

  setWeight(id: string, weight: number): void {
    this.edit({ picks: this.s.picks.map((p) => (p.id === id ? { ...p, weight } : p)) });
  }

  setMethod(method: MergeMethod): void {
    this.edit({ method });
  }

  setRank(rank: number): void {
    this.edit({ rank });
  }

  setRehearse(rehearse: number): void {
    this.edit({ rehearse });
  }

  clear(): void {
    this.edit({ picks: [] });
  }

  /** Measures the merge and the picks' cosine matrix; nothing is stored. */
  async preview(): Promise<boolean> {
    if (this.s.problem || this.s.busy) return false;
    const seq = ++this.seq;
    this.set({ busy: 'preview', error: null });
    const input = this.input();
    try {
      const [preview, similarity] = await Promise.all([
        this.api.adapters.mergePreview(input),
        input.ids.length <= 16 ? this.api.adapters.similarity({ ids: input.ids, weights: input.weights }) : null,
      ]);
      if (seq !== this.seq) return false;
      this.set({ preview, similarity, busy: null });
      return true;
    } catch (err) {
      if (seq === this.seq) this.set({ error: toUiError(err), busy: null });
      return false;
    }
  }

  /** Stores the merge (or finds it stored already); a rehearsal's steps arrive as `progress`. */
  async save(): Promise<boolean> {
    if (this.s.problem || this.s.busy) return false;
    const seq = ++this.seq;
    this.set({ busy: 'save', error: null, progress: null, cancel: null });
    const handle = this.api.adapters.merge(this.input(), (progress) => {
      if (seq === this.seq) this.set({ progress });
    });
    this.saving = handle;
    try {
      const saved = await handle.result;
      if (seq !== this.seq) return false;
      this.set({
        saved,
        busy: null,
        progress: null,
        preview: this.s.preview && { ...this.s.preview, existing: saved.adapter.id },
      });
      this.onSaved(saved.adapter);
      return true;
    } catch (err) {
      const error = toUiError(err);
      if (seq === this.seq)
        this.set(
          error.code === 'cancelled'
            ? { cancel: 'cancelled', busy: null, progress: null }
            : { error, busy: null, progress: null, cancel: null },
        );
      return false;
    } finally {
      if (this.saving === handle) this.saving = null;
    }
  }

  /** Stops the running save; the studio stores nothing for it. */
  cancel(): void {
    if (!this.saving || this.s.cancel === 'cancelling') return;
    this.set({ cancel: 'cancelling' });
    this.saving.cancel();
  }

  private input() {
    const { picks, method, rank, rehearse } = this.s;
    const name = this.s.name.trim();
    return {
      ids: picks.map((p) => p.id),
      method,
      weights: picks.map((p) => p.weight),
      ...(method === 'svd' ? { rank } : {}),
      ...(rehearse > 0 ? { rehearse } : {}),
      ...(name ? { name } : {}),
    };
  }

  /** A change to the inputs: the preview and the saved note no longer describe them. */
  private edit(patch: Partial<Pick<WorkbenchSnapshot, 'picks' | 'method' | 'rank' | 'rehearse'>>): void {
    if (this.s.busy === 'save') return; // the recipe being saved stays the one shown (the page locks it)
    this.seq++;
    const next = { ...this.s, ...patch };
    this.set({
      ...patch,
      preview: null,
      similarity: null,
      saved: null,
      error: null,
      busy: null,
      progress: null,
      cancel: null,
      problem: mergeProblem(next.picks, next.method, next.rank, next.rehearse),
    });
  }

  private set(patch: Partial<WorkbenchSnapshot>): void {
    this.s = { ...this.s, ...patch };
    this.onChange(this.s);
  }
}
