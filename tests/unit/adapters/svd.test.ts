// svdMerge / svdTruncate against the dense SVD of the exact sum (Eckart–Young).
import { describe, expect, it } from 'vitest';
import { cat } from '../../../main/adapters/merge';
import { svdMerge, svdTruncate } from '../../../main/adapters/svd';
import { validateAdapter } from '../../../main/adapters/validate';
import { dense, denseSingularValues, denseSum, keysOf, norm, randomAdapter, relErr, SHAPES } from './builders';

const list = [
  randomAdapter({ seed: 21, rank: 4, alpha: 8 }),
  randomAdapter({ seed: 22, rank: 3, alpha: 3 }),
  randomAdapter({ seed: 23, rank: 2, alpha: 4 }),
];
const w = [0.6, -0.9, 1.3];
const R = 9;

/** ‖ΔW − best rank-k‖_F / ‖ΔW‖_F from the dense spectrum. */
function eckartYoung(exact: Float64Array, dIn: number, dOut: number, k: number): number {
  const s = denseSingularValues(exact, dIn, dOut);
  const tail = s.slice(k).reduce((t, v) => t + v * v, 0);
  return Math.sqrt(tail) / norm(exact);
}

describe('svdMerge', () => {
  it('reaches the best rank-k error for every k, falling monotonically to ~0', () => {
    for (const { layer, module, dIn, dOut } of SHAPES) {
      const key = `${layer}.${module}` as const;
      const exact = denseSum(list, w, key);
      let last = Infinity;
      for (let k = 0; k <= R; k++) {
        const m = svdMerge(list, w, k);
        expect(m.rank).toBe(k);
        expect(m.alpha).toBe(k);
        expect(() => validateAdapter(m)).not.toThrow();
        const err = relErr(dense(m, key), exact);
        expect(err).toBeLessThanOrEqual(last + 1e-6);
        expect(Math.abs(err - eckartYoung(exact, dIn, dOut, k))).toBeLessThan(1e-4);
        last = err;
      }
      expect(last).toBeLessThan(1e-4);
    }
  });

  it('is exact below R once k reaches the rank of ΔW (d_out = 6 < R = 9)', () => {
    const key = keysOf(list[0]!).find((k) => k.endsWith('.v'))!;
    expect(relErr(dense(svdMerge(list, w, 6), key), denseSum(list, w, key))).toBeLessThan(1e-4);
  });

  it('handles a rank-deficient core: a + a has rank r inside R = 2r', () => {
    const a = list[0]!;
    const m = svdMerge([a, a], [1, 1], 4);
    for (const key of keysOf(a))
      expect(
        relErr(
          dense(m, key),
          dense(a, key).map((v) => 2 * v),
        ),
      ).toBeLessThan(1e-4);
    const zero = svdMerge([a, a], [1, -1], 3);
    for (const key of keysOf(a)) expect(norm(dense(zero, key))).toBeLessThan(1e-5 * norm(dense(a, key)));
  });

  it('returns the exact cat when k ≥ Σrᵢ and a rank-0 adapter when k = 0', () => {
    const full = svdMerge(list, w, 50);
    expect(full).toEqual(cat(list, w));
    const none = svdMerge(list, w, 0);
    expect([none.rank, none.alpha]).toEqual([0, 0]);
    for (const key of keysOf(none)) expect(norm(dense(none, key))).toBe(0);
  });

  it('rejects a k that is not a non-negative integer', () => {
    expect(() => svdMerge(list, w, -1)).toThrow(RangeError);
    expect(() => svdTruncate(list[0]!, 1.5)).toThrow('target rank k is 1.5, expected an integer ≥ 0');
  });
});

describe('svdTruncate', () => {
  it('keeps the leading singular values of ΔW', () => {
    const a = list[0]!;
    const t = svdTruncate(a, 2);
    for (const { layer, module, dIn, dOut } of SHAPES) {
      const key = `${layer}.${module}` as const;
      const want = denseSingularValues(dense(a, key), dIn, dOut).slice(0, 2);
      const got = denseSingularValues(dense(t, key), dIn, dOut).slice(0, 3);
      expect(got[0]).toBeCloseTo(want[0]!, 4);
      expect(got[1]).toBeCloseTo(want[1]!, 4);
      expect(got[2]).toBeCloseTo(0, 4);
    }
  });
});

describe('svdMerge of copies of one adapter (rank-deficient: a merge over the rank cap, docs/api.md)', () => {
  it('stays finite and exact: 16 copies of a rank-4 adapter, truncated to 32', () => {
    const a = randomAdapter({ seed: 31, rank: 4, alpha: 8, shapes: [{ layer: 0, module: 'q', dIn: 64, dOut: 64 }] });
    const m = svdMerge(Array(16).fill(a) as (typeof a)[], Array(16).fill(1) as number[], 32);
    expect(() => validateAdapter(m)).not.toThrow(); // was: every factor NaN (norm² underflow in the QR)
    for (const key of keysOf(a)) {
      const exact = denseSum([a], [16], key);
      expect(relErr(dense(m, key), exact)).toBeLessThan(1e-5);
    }
  });
});
