// Statistics of a merge against the exact weighted sum of its sources, for the merge preview and
// the visualizer: relative error, energy kept by an svd truncation, singular-value spectra before
// and after, and the norm of each rank-1 piece. All from factor Gram products, in Float64.
import { catFactors, factoredSvd, innerProduct, ownFactors, squaredNorm } from './factors';
import type { StatSummary, TargetStat } from './stats';
import { parseTargetKey, scaleOf, type Adapter, type TargetKey } from './types';
import { validateAdapters } from './validate';

export interface ExactComparison {
  /** ‖M − C‖_F / ‖C‖_F with C = Σ wᵢΔWᵢ; 0/0 reads as 0, x/0 as ∞. */
  readonly error: StatSummary;
  /** ‖C‖_F: the norm the exact sum would have. */
  readonly exact: StatSummary;
  /** ‖M‖²/‖C‖²: for an svd truncation, the share of the exact sum's energy (Σσ²) it keeps. */
  readonly energy: StatSummary;
}

function checkMerge(merged: Adapter, sources: readonly Adapter[], weights: readonly number[]): void {
  validateAdapters(sources, weights);
  validateAdapters([sources[0]!, merged]);
}

function summarize(
  keys: readonly TargetKey[],
  parts: readonly { num: number; den: number }[],
  f: (num: number, den: number) => number,
): StatSummary {
  const total = (pick: (p: { num: number; den: number }) => number) => parts.reduce((s, p) => s + pick(p), 0);
  return {
    perTarget: keys.map((key, i) => ({ key, ...parseTargetKey(key), value: f(parts[i]!.num, parts[i]!.den) })),
    overall: f(
      total((p) => p.num),
      total((p) => p.den),
    ),
  };
}

const ratio = (num: number, den: number) => (den > 0 ? num / den : num > 0 ? Infinity : 0);

/** How far `merged` lands from Σ wᵢΔWᵢ: ‖M − C‖² = ‖M‖² − 2⟨M, C⟩ + ‖C‖², never a dense ΔW. */
export function compareToExact(
  merged: Adapter,
  sources: readonly Adapter[],
  weights: readonly number[],
): ExactComparison {
  checkMerge(merged, sources, weights);
  const keys = [...merged.targets.keys()];
  const parts = keys.map((key) => {
    const m = ownFactors(merged, key);
    const c = catFactors(sources, weights, key);
    const mm = squaredNorm(m);
    const cc = squaredNorm(c);
    return { diff: Math.max(0, mm - 2 * innerProduct(m, c) + cc), mm, cc };
  });
  return {
    error: summarize(
      keys,
      parts.map((p) => ({ num: p.diff, den: p.cc })),
      (n, d) => Math.sqrt(ratio(n, d)),
    ),
    exact: summarize(
      keys,
      parts.map((p) => ({ num: p.cc, den: 1 })),
      (n) => Math.sqrt(n),
    ),
    energy: summarize(
      keys,
      parts.map((p) => ({ num: p.mm, den: p.cc })),
      ratio,
    ),
  };
}

export interface SpectrumPair {
  /** Singular values of the exact sum Σ wᵢΔWᵢ, descending. */
  readonly before: number[];
  /** Singular values of the merged adapter, descending. */
  readonly after: number[];
}

/** Leading `count` singular values of the exact sum and of the merge, per target. */
export function spectraAgainstExact(
  merged: Adapter,
  sources: readonly Adapter[],
  weights: readonly number[],
  count: number,
): TargetStat<SpectrumPair>[] {
  checkMerge(merged, sources, weights);
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count is ${count}, expected an integer ≥ 0`);
  const spectrum = (a: Parameters<typeof factoredSvd>[0]) =>
    a.a.cols === 0 ? [] : Array.from(factoredSvd(a).s.slice(0, count));
  return [...merged.targets.keys()].map((key) => ({
    key,
    ...parseTargetKey(key),
    value: {
      before: spectrum(catFactors(sources, weights, key)),
      after: merged.rank === 0 ? [] : spectrum(ownFactors(merged, key)),
    },
  }));
}

/**
 * ‖s·a_:j ⊗ b_j:‖_F = |s|·‖a_:j‖·‖b_j:‖ for each rank slot j, over all targets at once (root of the sum
 * of squares). For a cat merge, slot j belongs to one source's block, so the bars show each block's size.
 */
export function rankSlotNorms(adapter: Adapter): number[] {
  validateAdapters([adapter]);
  const r = adapter.rank;
  const s = scaleOf(adapter);
  const sq = new Float64Array(r);
  for (const { dIn, dOut, A, B } of adapter.targets.values()) {
    for (let j = 0; j < r; j++) {
      let na = 0;
      let nb = 0;
      for (let i = 0; i < dIn; i++) na += A[i * r + j]! ** 2;
      for (let o = 0; o < dOut; o++) nb += B[j * dOut + o]! ** 2;
      sq[j]! += s * s * na * nb;
    }
  }
  return Array.from(sq, Math.sqrt);
}
