// Global adapter by exponential moving average (docs/design.md §1): ΔW_g ← (1−β)·ΔW_g + β·ΔW_new,
// done as cat of the two then svd back to the rank budget. Versions are stored by the caller.
import { svdMerge, svdTruncate } from './svd';
import type { Adapter } from './types';

export function emaStep(global: Adapter | null, next: Adapter, beta: number, rankBudget: number): Adapter {
  if (!(beta >= 0 && beta <= 1)) throw new RangeError(`beta is ${beta}, expected a number in [0, 1]`);
  if (global === null) return svdTruncate(next, rankBudget);
  return svdMerge([global, next], [1 - beta, beta], rankBudget);
}
