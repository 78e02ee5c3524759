// Visualizer statistics from factors, against the same numbers computed on dense ΔW.
import { describe, expect, it } from 'vitest';
import { negate } from '../../../main/adapters/merge';
import { cosineSimilarity, frobeniusNorms, linearBaselineError, singularValues } from '../../../main/adapters/stats';
import { dense, denseSingularValues, denseSum, keysOf, norm, randomAdapter, relErr, SHAPES } from './builders';

const a = randomAdapter({ seed: 41, rank: 4, alpha: 8 });
const b = randomAdapter({ seed: 42, rank: 4, alpha: 2 });
const c = randomAdapter({ seed: 43, rank: 4, alpha: 4 });

const dot = (x: Float64Array, y: Float64Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);

describe('adapter statistics', () => {
  it('Frobenius norms match the dense ΔW, per target and overall', () => {
    const { perTarget, overall } = frobeniusNorms(a);
    expect(perTarget.map((t) => [t.layer, t.module])).toEqual(SHAPES.map((s) => [s.layer, s.module]));
    for (const t of perTarget) expect(t.value).toBeCloseTo(norm(dense(a, t.key)), 9);
    expect(overall).toBeCloseTo(Math.hypot(...keysOf(a).map((k) => norm(dense(a, k)))), 9);
  });

  it('leading singular values match the dense SVD', () => {
    for (const t of singularValues(a, 3)) {
      const shape = SHAPES.find((s) => s.module === t.module)!;
      const want = denseSingularValues(dense(a, t.key), shape.dIn, shape.dOut).slice(0, 3);
      expect(t.value).toHaveLength(3);
      t.value.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 9));
    }
  });

  it('cosine similarity matches the dense ΔW and is ±1 against itself and its negation', () => {
    const { perTarget, overall } = cosineSimilarity(a, b);
    for (const t of perTarget) {
      const x = dense(a, t.key);
      const y = dense(b, t.key);
      expect(t.value).toBeCloseTo(dot(x, y) / (norm(x) * norm(y)), 9);
    }
    const all = (ad: typeof a) => Float64Array.from(keysOf(a).flatMap((k) => [...dense(ad, k)]));
    expect(overall).toBeCloseTo(dot(all(a), all(b)) / (norm(all(a)) * norm(all(b))), 9);
    expect(cosineSimilarity(a, a).overall).toBeCloseTo(1, 9);
    expect(cosineSimilarity(a, negate(a)).overall).toBeCloseTo(-1, 6);
  });

  it('relative error of the linear baseline matches the dense computation, 0 for one adapter', () => {
    const w = [0.5, 1, -0.75];
    const { perTarget } = linearBaselineError([a, b, c], w);
    for (const t of perTarget) {
      const exact = denseSum([a, b, c], w, t.key);
      const n = dense(a, t.key).length;
      const la = new Float64Array(n);
      // Dense linear baseline: (Σ √|wᵢsᵢ|·sign·Aᵢ)(Σ √|wᵢsᵢ|·Bᵢ), built here independently.
      const pairs = [a, b, c].map((ad, i) => ({ p: ad.targets.get(t.key)!, ws: w[i]! * (ad.alpha / ad.rank) }));
      const { dIn, dOut } = pairs[0]!.p;
      const A = new Float64Array(dIn * 4);
      const B = new Float64Array(4 * dOut);
      for (const { p, ws } of pairs) {
        const root = Math.sqrt(Math.abs(ws));
        p.A.forEach((v, i) => (A[i]! += Math.sign(ws) * root * v));
        p.B.forEach((v, i) => (B[i]! += root * v));
      }
      for (let i = 0; i < dIn; i++)
        for (let k = 0; k < 4; k++)
          for (let j = 0; j < dOut; j++) la[i * dOut + j]! += A[i * 4 + k]! * B[k * dOut + j]!;
      expect(t.value).toBeCloseTo(relErr(la, exact), 6);
      expect(t.value).toBeGreaterThan(0.1);
    }
    expect(linearBaselineError([a], [0.4]).overall).toBeLessThan(1e-6);
  });
});
