// Rank-k truncation of an exact merge, through QR of the stacked factors and an SVD of the small
// core (see factoredSvd): cost O((d_in + d_out)·R² + R³) per target, never a d_in×d_out matrix.
import { catFactors, truncateFactors } from './factors';
import { cat, fromFactors } from './merge';
import type { Adapter } from './types';
import { validateAdapters } from './validate';

function checkRank(k: number): void {
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`target rank k is ${k}, expected an integer ≥ 0`);
}

/**
 * Best rank-k approximation of Σ wᵢΔWᵢ (Frobenius and spectral norm), α = k. When k ≥ Σrᵢ nothing
 * needs cutting and the exact `cat` (rank Σrᵢ) comes back; k = 0 gives a rank-0 adapter.
 */
export function svdMerge(adapters: readonly Adapter[], weights: readonly number[], k: number): Adapter {
  validateAdapters(adapters, weights);
  checkRank(k);
  const R = adapters.reduce((n, a) => n + a.rank, 0);
  if (k >= R) return cat(adapters, weights);
  return fromFactors(adapters[0]!, k, (key) => truncateFactors(catFactors(adapters, weights, key), k));
}

export function svdTruncate(adapter: Adapter, k: number): Adapter {
  return svdMerge([adapter], [1], k);
}
