// The largest rank a merge may produce (docs/api.md "Rank caps"): the maxMergeRank setting and the
// model's own dimensions (a rank past min(d_in, d_out) of a target adds nothing a smaller one cannot
// hold). Checked from the sources' ranks before any weights are loaded, so 64 copies of a rank-768
// merge (rank 49,152) are refused in milliseconds instead of growing the process past 8 GB.
import { StudioError } from '../../common/errors';
import type { LoraPair, TargetKey } from './types';

export type OverRank = 'refuse' | 'svd';

/** The cap and what sets it, from the setting and one source's target shapes. */
export function rankCap(
  setting: number,
  targets: ReadonlyMap<TargetKey, Pick<LoraPair, 'dIn' | 'dOut'>>,
): { cap: number; why: string } {
  let model = Infinity;
  let where = '';
  for (const [key, p] of targets) {
    const m = Math.min(p.dIn, p.dOut);
    if (m < model) [model, where] = [m, `${key}: min(d_in ${p.dIn}, d_out ${p.dOut})`];
  }
  return model < setting
    ? { cap: model, why: `the model's smallest target (${where})` }
    : { cap: setting, why: 'the maxMergeRank setting' };
}

/** The rank a merge asks for: cat sums the sources' ranks, linear keeps the first's, svd is told. */
export function askedRank(method: 'cat' | 'linear' | 'svd', ranks: readonly number[], rank?: number): number {
  if (method === 'cat') return ranks.reduce((a, b) => a + b, 0);
  if (method === 'linear') return ranks[0] ?? 0;
  return rank ?? 0;
}

/** Under the cap: the merge as asked; over it: refused with the numbers, or an svd to the cap. */
export function capMerge(
  method: 'cat' | 'linear' | 'svd',
  ranks: readonly number[],
  rank: number | undefined,
  cap: { cap: number; why: string },
  overRank: OverRank = 'refuse',
): { method: 'cat' | 'linear' | 'svd'; rank: number | undefined } {
  const asked = askedRank(method, ranks, rank);
  if (asked <= cap.cap) return { method, rank };
  if (overRank === 'svd') return { method: 'svd', rank: cap.cap };
  const how =
    method === 'cat'
      ? `a cat merge of ${ranks.length} adapters: the sum of their ranks`
      : method === 'linear'
        ? 'a linear merge keeps the first rank'
        : 'the svd target rank';
  throw new StudioError(
    'invalid_input',
    `rank: this merge asks for rank ${asked.toLocaleString('en-US')} (${how}), over the cap of ${cap.cap.toLocaleString('en-US')} set by ${cap.why}; ask overRank: 'svd' (--over-rank svd) to truncate it to ${cap.cap}, or merge fewer or smaller adapters`,
    { rankAsked: asked, rankCap: cap.cap },
  );
}
