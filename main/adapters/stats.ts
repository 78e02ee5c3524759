// Statistics for the visualizer, all from the factors: Gram products of size r×r (or R×R), never
// a dense ΔW. Values are in Float64 and nothing is rounded to Float32 on the way.
import { catFactors, factoredSvd, innerProduct, linearFactors, ownFactors, squaredNorm } from './factors';
import { requireEqualRanks } from './merge';
import { parseTargetKey, type Adapter, type TargetKey } from './types';
import { validateAdapters } from './validate';

export interface TargetStat<T> {
  readonly key: TargetKey;
  readonly layer: number;
  readonly module: string;
  readonly value: T;
}

/** Per-target values plus one over all targets at once (ΔW of every target stacked). */
export interface StatSummary {
  readonly perTarget: readonly TargetStat<number>[];
  readonly overall: number;
}

function perTarget<T>(adapter: Adapter, f: (key: TargetKey) => T): TargetStat<T>[] {
  return [...adapter.targets.keys()].map((key) => ({ key, ...parseTargetKey(key), value: f(key) }));
}

/** ‖ΔW‖_F per target: ‖sAB‖² = s²·trace((AᵀA)(BBᵀ)). */
export function frobeniusNorms(adapter: Adapter): StatSummary {
  validateAdapters([adapter]);
  const sq = perTarget(adapter, (key) => squaredNorm(ownFactors(adapter, key)));
  return { perTarget: sq.map((t) => ({ ...t, value: Math.sqrt(t.value) })), overall: Math.sqrt(sum(sq)) };
}

/** Leading singular values of ΔW per target, descending; at most min(r, d_in, d_out) of them. */
export function singularValues(adapter: Adapter, count = adapter.rank): TargetStat<number[]>[] {
  validateAdapters([adapter]);
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count is ${count}, expected an integer ≥ 0`);
  return perTarget(adapter, (key) => {
    if (adapter.rank === 0) return [];
    return Array.from(factoredSvd(ownFactors(adapter, key)).s.slice(0, count));
  });
}

/** cos(ΔW₁, ΔW₂) = ⟨ΔW₁,ΔW₂⟩_F / (‖ΔW₁‖‖ΔW₂‖), with ⟨·,·⟩ = trace((A₁ᵀA₂)(B₂B₁ᵀ)); 0 when either is 0. */
export function cosineSimilarity(x: Adapter, y: Adapter): StatSummary {
  validateAdapters([x, y]);
  const parts = perTarget(x, (key) => {
    const fx = ownFactors(x, key);
    const fy = ownFactors(y, key);
    return { dot: innerProduct(fx, fy), nx: squaredNorm(fx), ny: squaredNorm(fy) };
  });
  const cos = (dot: number, nx: number, ny: number) => (nx > 0 && ny > 0 ? dot / Math.sqrt(nx * ny) : 0);
  const total = (f: (p: { dot: number; nx: number; ny: number }) => number) =>
    parts.reduce((s, p) => s + f(p.value), 0);
  return {
    perTarget: parts.map(({ value: v, ...t }) => ({ ...t, value: cos(v.dot, v.nx, v.ny) })),
    overall: cos(
      total((p) => p.dot),
      total((p) => p.nx),
      total((p) => p.ny),
    ),
  };
}

/**
 * How far the linear baseline lands from the exact sum: ‖L − C‖_F / ‖C‖_F with
 * ‖L − C‖² = ‖L‖² − 2⟨L, C⟩ + ‖C‖², all from factor inner products. 0/0 reads as 0, x/0 as ∞.
 */
export function linearBaselineError(adapters: readonly Adapter[], weights: readonly number[]): StatSummary {
  validateAdapters(adapters, weights);
  requireEqualRanks(adapters);
  const parts = perTarget(adapters[0]!, (key) => {
    const l = linearFactors(adapters, weights, key);
    const c = catFactors(adapters, weights, key);
    const cc = squaredNorm(c);
    return { diff: Math.max(0, squaredNorm(l) - 2 * innerProduct(l, c) + cc), exact: cc };
  });
  const rel = (d: number, e: number) => (e > 0 ? Math.sqrt(d / e) : d > 0 ? Infinity : 0);
  return {
    perTarget: parts.map(({ value: v, ...t }) => ({ ...t, value: rel(v.diff, v.exact) })),
    overall: rel(
      parts.reduce((s, p) => s + p.value.diff, 0),
      parts.reduce((s, p) => s + p.value.exact, 0),
    ),
  };
}

function sum(stats: readonly TargetStat<number>[]): number {
  return stats.reduce((s, t) => s + t.value, 0);
}
