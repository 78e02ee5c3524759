// The Float64 kernels under the svd path: thin QR stays orthonormal on wide and rank-deficient input.
import { describe, expect, it } from 'vitest';
import { applyQ, crossCols, matmul, qr, qrOfTranspose, svd, transpose, type Mat } from '../../../main/adapters/linalg';
import { rng } from './builders';

function randomMat(rows: number, cols: number, seed: number): Mat {
  const next = rng(seed);
  return { rows, cols, data: Float64Array.from({ length: rows * cols }, () => next() - 0.5) };
}

const maxAbsDiff = (x: Mat, y: Mat) => x.data.reduce((m, v, i) => Math.max(m, Math.abs(v - y.data[i]!)), 0);
const identity = (n: number): Mat => ({
  rows: n,
  cols: n,
  data: Float64Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0)),
});

describe('qr', () => {
  it.each([
    ['tall', 9, 4],
    ['wide', 3, 7],
    ['square', 5, 5],
  ])('%s %i×%i: q has orthonormal columns, r is upper triangular, q·r = x', (_, m, n) => {
    const x = randomMat(m, n, m * 31 + n);
    const { q: h, r } = qr(x);
    const p = Math.min(m, n);
    const q = applyQ(h, identity(p));
    expect([q.rows, q.cols, r.rows, r.cols]).toEqual([m, p, p, n]);
    expect(maxAbsDiff(crossCols(q, q), identity(p))).toBeLessThan(1e-12);
    expect(maxAbsDiff(matmul(q, r), x)).toBeLessThan(1e-12);
    for (let i = 0; i < p; i++) for (let j = 0; j < i; j++) expect(r.data[i * n + j]).toBe(0);
    expect(qrOfTranspose(transpose(x)).r).toEqual(r);
  });

  it('stays orthonormal with zero and repeated columns', () => {
    const x = randomMat(8, 4, 5);
    for (let i = 0; i < 8; i++) {
      x.data[i * 4 + 1] = 0;
      x.data[i * 4 + 3] = x.data[i * 4]!;
    }
    const { q: h, r } = qr(x);
    const q = applyQ(h, identity(4));
    expect(maxAbsDiff(crossCols(q, q), identity(4))).toBeLessThan(1e-12);
    expect(maxAbsDiff(matmul(q, r), x)).toBeLessThan(1e-12);
  });
});

const diagTimes = (s: Float64Array, v: Mat): Mat => ({
  rows: s.length,
  cols: v.rows,
  data: transpose(v).data.map((e, i) => e * s[Math.floor(i / v.rows)]!),
});

describe('svd', () => {
  it.each([
    ['tall', 7, 4],
    ['wide', 3, 6],
  ])('%s %i×%i: thin, descending, orthonormal, u·S·vᵀ = x', (_, m, n) => {
    const x = randomMat(m, n, 9 + m);
    const { u, s, v } = svd(x);
    const t = Math.min(m, n);
    expect([u.rows, u.cols, v.rows, v.cols, s.length]).toEqual([m, t, n, t, t]);
    expect([...s]).toEqual([...s].sort((p, q) => q - p));
    expect(maxAbsDiff(crossCols(u, u), identity(t))).toBeLessThan(1e-12);
    expect(maxAbsDiff(crossCols(v, v), identity(t))).toBeLessThan(1e-12);
    expect(maxAbsDiff(matmul(u, diagTimes(s, v)), x)).toBeLessThan(1e-12);
  });

  it('keeps small but real singular values of a graded matrix', () => {
    const want = [1, 1e-3, 1e-6, 1e-10];
    const u0 = applyQ(qr(randomMat(6, 4, 7)).q, identity(4));
    const v0 = applyQ(qr(randomMat(4, 4, 8)).q, identity(4));
    const x = matmul(u0, diagTimes(Float64Array.from(want), v0));
    const { u, s, v } = svd(x);
    want.forEach((w, i) => expect(Math.abs(s[i]! - w)).toBeLessThan(1e-14));
    expect(maxAbsDiff(matmul(u, diagTimes(s, v)), x)).toBeLessThan(1e-14);
  });

  it('gives zero vectors for the null directions of a rank-deficient matrix', () => {
    const x = matmul(randomMat(6, 2, 3), randomMat(2, 5, 4));
    const { u, s, v } = svd(x);
    expect(s[2]).toBeLessThan(1e-13 * s[0]!);
    expect(maxAbsDiff(matmul(u, diagTimes(s, v)), x)).toBeLessThan(1e-12);
    for (let r = 0; r < 6; r++) expect(u.data[r * 5 + 4]).toBe(0);
  });
});
