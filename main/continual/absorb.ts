// How each mode absorbs a new lesson and what answers the held-out tasks afterwards: one table.
// merge/cat/linear write the bundle's global adapter (a new version each episode, so rollback works
// as for `ema update`); independent and in_context leave it alone. The algebra runs in the adapter
// algebra worker; only the append (in the episode's transaction) runs on the calling thread.
import type { ContinualMode } from '../../common/api/continual-schemas';
import type { AdapterRecipe } from '../../common/api/adapter-schemas';
import type { MergeJob } from '../adapters/algebra-ops';
import type { Adapter, LoraPair, TargetKey } from '../adapters/types';
import type { PracticeQuestion } from '../../common/distill/practice';

export interface Lesson {
  episode: number;
  name: string;
  version: number;
  text: string;
  /** The compiled adapter's row and key. */
  rowId: number;
  key: string;
  tensorsSha256: string;
  /** What the lesson practised on; rehearsal practises on it again. */
  practice: readonly PracticeQuestion[];
}

/** Appends what was computed as the next global version and returns its number. */
export type Write = () => number;

/** What a mode may do to the global adapter; numbers are global versions. */
export interface GlobalOps {
  /** ΔW_g ← (1−β)ΔW_g + βΔW_lesson (the newest), svd to the rank budget, computed in the worker
   *  (GlobalAdapterService.emaStepOffThread), then rehearsed on every lesson when the run asks; the
   *  write appends it. */
  ema(lessons: readonly Lesson[]): Promise<Write>;
  /** cat or linear in the worker, over copies of the adapters (the caller keeps them). */
  merge(job: MergeJob): Promise<Adapter>;
  /** Appends `adapter` (made by `recipe` from `lessons`) as the next version; β = the newest lesson's weight. */
  append(adapter: Adapter, recipe: AdapterRecipe, lessons: readonly Lesson[], beta: number): number;
  load(lesson: Lesson): Adapter;
}

/** What answers the held-out tasks: the global head, the newest lesson's adapter, or the lessons' text. */
export type Answerer = 'global' | 'newest' | 'text';

export interface ModeRow {
  mode: ContinualMode;
  answerer: Answerer;
  /** Computes the lesson's global version off the main thread and returns its write, or null (the mode
   *  writes none); the caller runs the write in the transaction that stores the episode. */
  absorb(ops: GlobalOps, lessons: readonly Lesson[]): Promise<Write | null>;
}

/** Zero columns of A and zero rows of B up to `rank`, α scaled so ΔW is unchanged. */
export function padRank(adapter: Adapter, rank: number): Adapter {
  const r = adapter.rank;
  if (r === rank) return adapter;
  if (r > rank) throw new RangeError(`padRank: rank ${r} is above ${rank}`);
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, p] of adapter.targets) {
    const A = new Float32Array(p.dIn * rank);
    for (let i = 0; i < p.dIn; i++) A.set(p.A.subarray(i * r, (i + 1) * r), i * rank);
    const B = new Float32Array(rank * p.dOut);
    B.set(p.B);
    targets.set(key, { dIn: p.dIn, dOut: p.dOut, A, B });
  }
  return { rank, alpha: r === 0 ? rank : (adapter.alpha * rank) / r, targets };
}

/** The mean of every lesson so far by `cat` (exact) or factor-wise `linear` (ranks padded to the largest). */
function mean(method: 'cat' | 'linear') {
  return async (ops: GlobalOps, lessons: readonly Lesson[]): Promise<Write> => {
    const k = lessons.length;
    const weights = lessons.map(() => 1 / k);
    let adapters = lessons.map((l) => ops.load(l));
    if (method === 'linear') {
      const top = Math.max(...adapters.map((a) => a.rank));
      adapters = adapters.map((a) => padRank(a, top));
    }
    const merged = await ops.merge({ method, adapters, weights });
    const recipe: AdapterRecipe = { kind: 'merge', method, weights, rank: null, sources: lessons.map((l) => l.key) };
    return () => ops.append(merged, recipe, lessons, 1 / k);
  };
}

export const MODES: readonly ModeRow[] = [
  { mode: 'merge', answerer: 'global', absorb: (ops, lessons) => ops.ema(lessons) },
  { mode: 'cat', answerer: 'global', absorb: mean('cat') },
  { mode: 'linear', answerer: 'global', absorb: mean('linear') },
  { mode: 'independent', answerer: 'newest', absorb: () => Promise.resolve(null) },
  { mode: 'in_context', answerer: 'text', absorb: () => Promise.resolve(null) },
];

export const modeRow = (mode: ContinualMode): ModeRow => MODES.find((m) => m.mode === mode)!;
