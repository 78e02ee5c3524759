// emaStep: ΔW_g ← (1−β)ΔW_g + βΔW_new, truncated to the rank budget.
import { describe, expect, it } from 'vitest';
import { emaStep } from '../../../main/adapters/ema';
import { svdTruncate } from '../../../main/adapters/svd';
import { dense, denseSingularValues, denseSum, keysOf, norm, randomAdapter, relErr, SHAPES } from './builders';

const global = randomAdapter({ seed: 31, rank: 6, alpha: 12 });
const next = randomAdapter({ seed: 32, rank: 4, alpha: 8 });

describe('emaStep', () => {
  it('β = 1 returns the new adapter, β = 0 the old one', () => {
    const one = emaStep(global, next, 1, 6);
    const zero = emaStep(global, next, 0, 6);
    for (const key of keysOf(next)) {
      expect(relErr(dense(one, key), dense(next, key))).toBeLessThan(1e-4);
      expect(relErr(dense(zero, key), dense(global, key))).toBeLessThan(1e-4);
    }
    expect(one.rank).toBe(6);
  });

  it('starts from the new adapter truncated to the budget', () => {
    expect(emaStep(null, next, 0.3, 2)).toEqual(svdTruncate(next, 2));
    expect(emaStep(null, next, 0.3, 8).rank).toBe(4);
  });

  it('is the exact mix when the budget holds both, and its best rank-k approximation otherwise', () => {
    const beta = 0.3;
    const wide = emaStep(global, next, beta, 10);
    const tight = emaStep(global, next, beta, 5);
    for (const { layer, module, dIn, dOut } of SHAPES) {
      const key = `${layer}.${module}` as const;
      const exact = denseSum([global, next], [1 - beta, beta], key);
      expect(relErr(dense(wide, key), exact)).toBeLessThan(1e-5);
      const tail = denseSingularValues(exact, dIn, dOut)
        .slice(5)
        .reduce((t, v) => t + v * v, 0);
      expect(relErr(dense(tight, key), exact)).toBeCloseTo(Math.sqrt(tail) / norm(exact), 4);
    }
  });

  it('rejects β outside [0, 1]', () => {
    expect(() => emaStep(global, next, 1.5, 4)).toThrow('beta is 1.5, expected a number in [0, 1]');
    expect(() => emaStep(global, next, NaN, 4)).toThrow(RangeError);
  });
});
