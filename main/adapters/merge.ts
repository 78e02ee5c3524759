// Merges that keep ΔW exact (cat, scale, negate) and the factor-wise baseline (linearBaseline).
// Validation runs first; everything after it is pure over typed arrays.
import { catFactors, linearFactors, type Factors } from './factors';
import type { Mat } from './linalg';
import { type Adapter, type LoraPair, type TargetKey } from './types';
import { AdapterValidationError, validateAdapters } from './validate';

function toF32(m: Mat): Float32Array {
  return Float32Array.from(m.data);
}

/** A scale-1 adapter (α = r) over the target set of `like`, one factor pair per target. */
export function fromFactors(like: Adapter, rank: number, factorsOf: (key: TargetKey) => Factors): Adapter {
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, { dIn, dOut }] of like.targets) {
    const { a, b } = factorsOf(key);
    targets.set(key, { dIn, dOut, A: toF32(a), B: toF32(b) });
  }
  return { rank, alpha: rank, targets };
}

/** Rank concatenation (the default merge): exactly Σ wᵢΔWᵢ, rank Σrᵢ, α = rank (scale 1). */
export function cat(adapters: readonly Adapter[], weights: readonly number[]): Adapter {
  validateAdapters(adapters, weights);
  const rank = adapters.reduce((n, a) => n + a.rank, 0);
  return fromFactors(adapters[0]!, rank, (key) => catFactors(adapters, weights, key));
}

/**
 * BASELINE ONLY, kept because the paper compares against it: PEFT's "linear" merge,
 * A = Σ √(wᵢsᵢ)·Aᵢ, B = Σ √(wᵢsᵢ)·Bᵢ (sᵢ = αᵢ/rᵢ; sign of wᵢsᵢ carried on A), α = r.
 * Requires equal ranks. ΔW = (ΣaᵢAᵢ)(ΣbⱼBⱼ) has cross terms AᵢBⱼ, so it is not Σ wᵢΔWᵢ except
 * for a single adapter; use `cat` or `svdMerge` for real merges.
 */
export function linearBaseline(adapters: readonly Adapter[], weights: readonly number[]): Adapter {
  validateAdapters(adapters, weights);
  requireEqualRanks(adapters);
  return fromFactors(adapters[0]!, adapters[0]!.rank, (key) => linearFactors(adapters, weights, key));
}

export function requireEqualRanks(adapters: readonly Adapter[]): void {
  const r = adapters[0]!.rank;
  adapters.forEach((a, index) => {
    if (a.rank !== r)
      throw new AdapterValidationError(
        { index },
        `rank is ${a.rank}, linear merge needs every rank equal to adapter 0's ${r}`,
      );
  });
}

/** s·ΔW: s folded into A, rank and α kept. */
export function scale(adapter: Adapter, s: number): Adapter {
  validateAdapters([adapter], [s]);
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, pair] of adapter.targets) {
    targets.set(key, { ...pair, A: pair.A.map((v) => s * v), B: pair.B.slice() });
  }
  return { rank: adapter.rank, alpha: adapter.alpha, targets };
}

export function negate(adapter: Adapter): Adapter {
  return scale(adapter, -1);
}
