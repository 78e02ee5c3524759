// cat / scale / negate / linearBaseline as algebra, against dense ΔW computed here.
import { describe, expect, it } from 'vitest';
import { cat, linearBaseline, negate, scale } from '../../../main/adapters/merge';
import { svdMerge } from '../../../main/adapters/svd';
import { validateAdapter } from '../../../main/adapters/validate';
import { dense, denseSum, keysOf, norm, randomAdapter, relErr } from './builders';

const a = randomAdapter({ seed: 11, rank: 4, alpha: 8 });
const b = randomAdapter({ seed: 12, rank: 2, alpha: 16 });
const c = randomAdapter({ seed: 13, rank: 3, alpha: 3 });
const d = randomAdapter({ seed: 14, rank: 4, alpha: 4 });

describe('cat', () => {
  it('equals the dense weighted sum, with rank Σrᵢ and scale 1', () => {
    const w = [0.5, -1.25, 2];
    const m = cat([a, b, c], w);
    expect(m.rank).toBe(9);
    expect(m.alpha).toBe(9);
    expect(() => validateAdapter(m)).not.toThrow();
    for (const key of keysOf(a)) expect(relErr(dense(m, key), denseSum([a, b, c], w, key))).toBeLessThan(1e-6);
  });

  it('with weight −1 negates, like negate and scale(−1)', () => {
    for (const m of [cat([a], [-1]), negate(a), scale(a, -1)]) {
      for (const key of keysOf(a))
        expect(
          relErr(
            dense(m, key),
            dense(a, key).map((v) => -v),
          ),
        ).toBeLessThan(1e-6);
    }
  });

  it('a − a = 0', () => {
    const zero = cat([a, a], [1, -1]);
    for (const key of keysOf(a)) expect(norm(dense(zero, key))).toBeLessThan(1e-6 * norm(dense(a, key)));
  });

  it('scale multiplies ΔW and keeps rank and α', () => {
    const s = scale(b, 2.5);
    expect([s.rank, s.alpha]).toEqual([b.rank, b.alpha]);
    for (const key of keysOf(b))
      expect(
        relErr(
          dense(s, key),
          dense(b, key).map((v) => 2.5 * v),
        ),
      ).toBeLessThan(1e-6);
  });

  it('never writes into its inputs and gives the same bytes for the same input', () => {
    const before = keysOf(a).map((k) => [a.targets.get(k)!.A.slice(), a.targets.get(k)!.B.slice()]);
    const x = svdMerge([a, b, c], [1, 2, 3], 5);
    const y = svdMerge([a, b, c], [1, 2, 3], 5);
    cat([a, d], [0.3, 0.7]);
    scale(a, 3);
    keysOf(a).forEach((k, i) => {
      expect(a.targets.get(k)!.A).toEqual(before[i]![0]);
      expect(a.targets.get(k)!.B).toEqual(before[i]![1]);
      expect(x.targets.get(k)!.A).toEqual(y.targets.get(k)!.A);
      expect(x.targets.get(k)!.B).toEqual(y.targets.get(k)!.B);
    });
  });
});

describe('linearBaseline', () => {
  it('differs from the exact sum in general (cross terms)', () => {
    const w = [0.5, 0.5];
    const l = linearBaseline([a, d], w);
    expect([l.rank, l.alpha]).toEqual([4, 4]);
    for (const key of keysOf(a)) expect(relErr(dense(l, key), denseSum([a, d], w, key))).toBeGreaterThan(0.1);
  });

  it('equals cat for a single adapter, for either sign of the weight', () => {
    for (const w of [0.7, -0.7, 1]) {
      for (const key of keysOf(a))
        expect(relErr(dense(linearBaseline([a], [w]), key), dense(cat([a], [w]), key))).toBeLessThan(1e-6);
    }
  });

  it('matches PEFT: A = Σ√(wᵢsᵢ)Aᵢ, B = Σ√(wᵢsᵢ)Bᵢ', () => {
    const w = [0.25, 2];
    const key = keysOf(a)[0]!;
    const l = linearBaseline([a, d], w).targets.get(key)!;
    const ca = Math.sqrt(w[0]! * (a.alpha / a.rank));
    const cd = Math.sqrt(w[1]! * (d.alpha / d.rank));
    const pa = a.targets.get(key)!;
    const pd = d.targets.get(key)!;
    expect(l.A[5]).toBeCloseTo(ca * pa.A[5]! + cd * pd.A[5]!, 5);
    expect(l.B[7]).toBeCloseTo(ca * pa.B[7]! + cd * pd.B[7]!, 5);
  });
});
