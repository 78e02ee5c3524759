// Merge statistics from factors (error against the exact sum, energy kept, spectra before and after
// svd, rank-slot norms), against the same numbers computed on dense ΔW.
import { describe, expect, it } from 'vitest';
import { cat, linearBaseline } from '../../../main/adapters/merge';
import { compareToExact, rankSlotNorms, spectraAgainstExact } from '../../../main/adapters/merge-stats';
import { svdMerge } from '../../../main/adapters/svd';
import { dense, denseSingularValues, denseSum, keysOf, norm, randomAdapter, relErr, SHAPES } from './builders';

const a = randomAdapter({ seed: 51, rank: 4, alpha: 8 });
const b = randomAdapter({ seed: 52, rank: 4, alpha: 2 });
const c = randomAdapter({ seed: 53, rank: 3, alpha: 6 });
const w = [0.5, -1, 0.8];

const shapeOf = (module: string) => SHAPES.find((s) => s.module === module)!;

describe('merge statistics against the exact sum', () => {
  it('error of a linear merge equals the dense relative error; exact norms equal the dense sum', () => {
    const lin = linearBaseline([a, b], [0.5, -1]);
    const { error, exact } = compareToExact(lin, [a, b], [0.5, -1]);
    for (const t of error.perTarget) {
      expect(t.value).toBeCloseTo(relErr(dense(lin, t.key), denseSum([a, b], [0.5, -1], t.key)), 6);
      expect(t.value).toBeGreaterThan(0.1);
    }
    for (const t of exact.perTarget) expect(t.value).toBeCloseTo(norm(denseSum([a, b], [0.5, -1], t.key)), 9);
    const sums = keysOf(a).map((k) => denseSum([a, b], [0.5, -1], k));
    const diffs = keysOf(a).map((k) => dense(lin, k).map((v, i) => v - sums[keysOf(a).indexOf(k)]![i]!));
    expect(error.overall).toBeCloseTo(Math.hypot(...diffs.map(norm)) / Math.hypot(...sums.map(norm)), 6);
  });

  it('cat is exact (error at Float32 rounding) and keeps all the energy', () => {
    const { error, energy } = compareToExact(cat([a, b, c], w), [a, b, c], w);
    expect(error.overall).toBeLessThan(1e-5);
    expect(energy.overall).toBeCloseTo(1, 5);
  });

  it('svd truncation: error² + energy kept = 1, and energy kept = Σ_{i≤k}σᵢ² / Σσᵢ² of the dense sum', () => {
    const k = 5;
    const merged = svdMerge([a, b, c], w, k);
    const { error, energy } = compareToExact(merged, [a, b, c], w);
    for (const [i, t] of energy.perTarget.entries()) {
      const { dIn, dOut } = shapeOf(t.module);
      const s = denseSingularValues(denseSum([a, b, c], w, t.key), dIn, dOut);
      const kept = s.slice(0, k).reduce((x, v) => x + v * v, 0) / s.reduce((x, v) => x + v * v, 0);
      expect(t.value).toBeCloseTo(kept, 5);
      expect(error.perTarget[i]!.value ** 2 + t.value).toBeCloseTo(1, 5); // Eckart–Young: the rest is the error
    }
    expect(energy.overall).toBeGreaterThan(0);
    expect(energy.overall).toBeLessThan(1);
  });

  it('spectra before and after truncation match the dense SVDs', () => {
    const k = 4;
    const merged = svdMerge([a, b, c], w, k);
    for (const t of spectraAgainstExact(merged, [a, b, c], w, 8)) {
      const { dIn, dOut } = shapeOf(t.module);
      const before = denseSingularValues(denseSum([a, b, c], w, t.key), dIn, dOut).slice(0, 8);
      const after = denseSingularValues(dense(merged, t.key), dIn, dOut).slice(0, k);
      expect(t.value.before).toHaveLength(Math.min(8, dIn, dOut));
      t.value.before.forEach((v, i) => expect(v).toBeCloseTo(before[i]!, 6));
      expect(t.value.after).toHaveLength(Math.min(k, dIn, dOut));
      t.value.after.forEach((v, i) => expect(v).toBeCloseTo(after[i]!, 4));
      t.value.after.forEach((v, i) => expect(v).toBeCloseTo(t.value.before[i]!, 4)); // truncation keeps the top k
    }
  });

  it('rank-slot norms: each slot is the norm of its rank-1 piece, blocks of a cat scale with |wᵢ|', () => {
    const slots = rankSlotNorms(a);
    const s = a.alpha / a.rank;
    slots.forEach((v, j) => {
      const sq = keysOf(a).reduce((acc, key) => {
        const { dIn, dOut, A, B } = a.targets.get(key)!;
        const piece = new Float64Array(dIn * dOut);
        for (let i = 0; i < dIn; i++)
          for (let o = 0; o < dOut; o++) piece[i * dOut + o] = s * A[i * 4 + j]! * B[j * dOut + o]!;
        return acc + norm(piece) ** 2;
      }, 0);
      expect(v).toBeCloseTo(Math.sqrt(sq), 5);
    });
    const merged = rankSlotNorms(cat([a, b, c], w));
    expect(merged).toHaveLength(11);
    merged.slice(0, 4).forEach((v, j) => expect(v).toBeCloseTo(0.5 * slots[j]!, 5));
    const bSlots = rankSlotNorms(b);
    merged.slice(4, 8).forEach((v, j) => expect(v).toBeCloseTo(bSlots[j]!, 5));
  });

  it('refuses mismatched targets and bad counts', () => {
    const other = randomAdapter({ seed: 9, shapes: [SHAPES[0]!] });
    expect(() => compareToExact(other, [a], [1])).toThrow(/target/);
    expect(() => spectraAgainstExact(a, [a], [1], -1)).toThrow(/count/);
  });
});
