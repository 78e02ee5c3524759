// The adapter algebra as whole service-sized jobs (merge + its preview stats, EMA step, visualizer
// stats, similarity matrix): one job per worker message, so sources cross the thread boundary once.
// Pure functions over main/adapters; algebra-worker.ts runs them off the main thread.
import { emaStep } from './ema';
import { cat, linearBaseline } from './merge';
import { compareToExact, rankSlotNorms, spectraAgainstExact, type SpectrumPair } from './merge-stats';
import { cosineSimilarity, frobeniusNorms, linearBaselineError, singularValues, type StatSummary } from './stats';
import type { TargetStat } from './stats';
import { svdMerge } from './svd';
import type { Adapter } from './types';

export type MergeMethod = 'cat' | 'linear' | 'svd';

export interface MergeJob {
  method: MergeMethod;
  adapters: Adapter[];
  weights: number[];
  /** Target rank; svd only. */
  rank?: number;
}

function merge({ method, adapters, weights, rank }: MergeJob): Adapter {
  if (method === 'cat') return cat(adapters, weights);
  if (method === 'linear') return linearBaseline(adapters, weights);
  return svdMerge(adapters, weights, rank!);
}

function mergePreview(job: MergeJob) {
  const merged = merge(job);
  const cmp = compareToExact(merged, job.adapters, job.weights);
  return {
    rank: merged.rank,
    norms: frobeniusNorms(merged),
    sourceNorms: job.adapters.map((a) => frobeniusNorms(a).overall),
    cmp,
  };
}

function ema(job: { global: Adapter | null; next: Adapter; beta: number; rankBudget: number }): Adapter {
  return emaStep(job.global, job.next, job.beta, job.rankBudget);
}

function details({ adapter, count }: { adapter: Adapter; count: number }) {
  return { norms: frobeniusNorms(adapter), singularValues: singularValues(adapter, count) };
}

/** `truncated`: the sources and weights an svd merge or EMA version cut down, or null. */
function visualize(job: {
  adapter: Adapter;
  count: number;
  truncated: { sources: Adapter[]; weights: number[] } | null;
}): {
  rankSlots: number[];
  spectra: TargetStat<SpectrumPair>[] | null;
  energy: StatSummary | null;
  singularValues: TargetStat<number[]>[] | null;
} {
  const { adapter, count, truncated } = job;
  const rankSlots = rankSlotNorms(adapter);
  if (!truncated)
    return {
      rankSlots,
      spectra: null,
      energy: null,
      singularValues: singularValues(adapter, Math.min(count, adapter.rank)),
    };
  return {
    rankSlots,
    spectra: spectraAgainstExact(adapter, truncated.sources, truncated.weights, count),
    energy: compareToExact(adapter, truncated.sources, truncated.weights).energy,
    singularValues: null,
  };
}

/** Upper-triangle cosines (null below the diagonal) and, when `linearWeights` is given, the linear
 *  baseline's error against cat. */
function similarity({ adapters, linearWeights }: { adapters: Adapter[]; linearWeights: number[] | null }) {
  const pairs = adapters.map((x, i) => adapters.map((y, j) => (j < i ? null : cosineSimilarity(x, y))));
  return { pairs, linearError: linearWeights ? linearBaselineError(adapters, linearWeights) : null };
}

export const ALGEBRA_OPS = { merge, mergePreview, ema, details, visualize, similarity };
export type AlgebraOps = typeof ALGEBRA_OPS;
export type AlgebraOp = keyof AlgebraOps;
export type AlgebraArg<K extends AlgebraOp> = Parameters<AlgebraOps[K]>[0];
export type AlgebraResult<K extends AlgebraOp> = ReturnType<AlgebraOps[K]>;
