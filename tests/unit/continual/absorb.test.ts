// padRank (what lets the factor-wise baseline run over lessons of different ranks) keeps ΔW exactly.
import { describe, expect, it } from 'vitest';
import type { Adapter, LoraPair, TargetKey } from '../../../main/adapters/types';
import { MODES, padRank } from '../../../main/continual/absorb';
import { CONTINUAL_MODES } from '../../../common/api/continual-schemas';

function adapter(rank: number, alpha: number, seed: number): Adapter {
  let s = seed;
  const next = () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
  const targets = new Map<TargetKey, LoraPair>();
  targets.set('0.q', {
    dIn: 3,
    dOut: 2,
    A: Float32Array.from({ length: 3 * rank }, next),
    B: Float32Array.from({ length: rank * 2 }, next),
  });
  return { rank, alpha, targets };
}

/** (α/r)·A·B for the one target. */
function dense(a: Adapter): number[] {
  const p = a.targets.get('0.q')!;
  const out: number[] = [];
  for (let i = 0; i < p.dIn; i++)
    for (let j = 0; j < p.dOut; j++) {
      let v = 0;
      for (let k = 0; k < a.rank; k++) v += p.A[i * a.rank + k]! * p.B[k * p.dOut + j]!;
      out.push((a.alpha / a.rank) * v);
    }
  return out;
}

describe('padRank', () => {
  it('raises the rank with zero slots and keeps ΔW', () => {
    const a = adapter(2, 4, 7);
    const p = padRank(a, 5);
    expect(p.rank).toBe(5);
    expect(p.targets.get('0.q')!.A).toHaveLength(15);
    dense(p).forEach((v, i) => expect(v).toBeCloseTo(dense(a)[i]!, 6));
  });

  it('returns the adapter as it is at its own rank and refuses a lower rank', () => {
    const a = adapter(3, 3, 1);
    expect(padRank(a, 3)).toBe(a);
    expect(() => padRank(a, 2)).toThrow(RangeError);
  });
});

describe('the mode table', () => {
  it('has one row per mode of the contract, in its order', () => {
    expect(MODES.map((m) => m.mode)).toEqual([...CONTINUAL_MODES]);
  });
});
