// Float64 factor forms of one target, scale folded in: ΔW = a·b. Shared by the merges (which round
// to Float32 at the end) and by the statistics (which never round).
import {
  applyQ,
  crossCols,
  crossRows,
  frobDot,
  fromF32,
  matmul,
  qr,
  qrOfTranspose,
  svd,
  transpose,
  zeros,
  type Mat,
  type Reflectors,
} from './linalg';
import { scaleOf, type Adapter, type TargetKey } from './types';

export interface Factors {
  readonly a: Mat; // d_in × R
  readonly b: Mat; // R × d_out
}

function pairOf(adapter: Adapter, key: TargetKey) {
  const pair = adapter.targets.get(key);
  if (!pair) throw new Error(`target ${key} missing after validation`);
  return pair;
}

/** [c₁A₁ | c₂A₂ | …] and [B₁; B₂; …] with cᵢ = wᵢ·αᵢ/rᵢ: exactly Σ wᵢ ΔWᵢ. */
export function catFactors(list: readonly Adapter[], weights: readonly number[], key: TargetKey): Factors {
  const { dIn, dOut } = pairOf(list[0]!, key);
  const R = list.reduce((n, ad) => n + ad.rank, 0);
  const a = zeros(dIn, R);
  const b = zeros(R, dOut);
  let off = 0;
  list.forEach((ad, i) => {
    const { A, B } = pairOf(ad, key);
    const r = ad.rank;
    const c = weights[i]! * scaleOf(ad);
    for (let row = 0; row < dIn; row++) for (let j = 0; j < r; j++) a.data[row * R + off + j] = c * A[row * r + j]!;
    b.data.set(B, off * dOut);
    off += r;
  });
  return { a, b };
}

/**
 * The factor-wise baseline, as PEFT's add_weighted_adapter(combination_type="linear"):
 * a = Σ √(wᵢsᵢ)·Aᵢ, b = Σ √(wᵢsᵢ)·Bᵢ with sᵢ = αᵢ/rᵢ; equal ranks required by the caller.
 * PEFT takes a plain square root; we carry the sign of wᵢsᵢ on the A side so negative weights work
 * and one adapter reproduces wΔW exactly. Not Σ wᵢΔWᵢ: it adds cross terms AᵢBⱼ.
 */
export function linearFactors(list: readonly Adapter[], weights: readonly number[], key: TargetKey): Factors {
  const { dIn, dOut } = pairOf(list[0]!, key);
  const r = list[0]!.rank;
  const a = zeros(dIn, r);
  const b = zeros(r, dOut);
  list.forEach((ad, i) => {
    const { A, B } = pairOf(ad, key);
    const ws = weights[i]! * scaleOf(ad);
    const root = Math.sqrt(Math.abs(ws));
    const signed = Math.sign(ws) * root;
    for (let j = 0; j < A.length; j++) a.data[j]! += signed * A[j]!;
    for (let j = 0; j < B.length; j++) b.data[j]! += root * B[j]!;
  });
  return { a, b };
}

export function ownFactors(adapter: Adapter, key: TargetKey): Factors {
  const { dIn, dOut, A, B } = pairOf(adapter, key);
  return { a: fromF32(dIn, adapter.rank, A, scaleOf(adapter)), b: fromF32(adapter.rank, dOut, B) };
}

/** ⟨a₁b₁, a₂b₂⟩_F = trace((a₁ᵀa₂)(b₂b₁ᵀ)): R₁×R₂ products only, never d_in×d_out. */
export function innerProduct(x: Factors, y: Factors): number {
  if (x.a.cols === 0 || y.a.cols === 0) return 0;
  return frobDot(crossCols(x.a, y.a), crossRows(x.b, y.b));
}

export function squaredNorm(x: Factors): number {
  return Math.max(0, innerProduct(x, x));
}

/**
 * Spectrum of ΔW = a·b without forming it: a = Qa·Ra, bᵀ = Qb·Rb, so ΔW = Qa·(Ra·Rbᵀ)·Qbᵀ and the
 * small core Ra·Rbᵀ (≤ R×R) has the same singular values; its vectors lift back through Qa, Qb.
 */
export function factoredSvd(x: Factors): { qa: Reflectors; qb: Reflectors; u: Mat; s: Float64Array; v: Mat } {
  const A = qr(x.a);
  const B = qrOfTranspose(x.b);
  const core = matmul(A.r, transpose(B.r)); // p×q, p = min(d_in, R), q = min(d_out, R)
  return { qa: A.q, qb: B.q, ...svd(core) };
}

/**
 * Best rank-k factors of a·b (Eckart–Young): a' = Qa·U_k·√S_k, b' = (Qb·V_k·√S_k)ᵀ. S is split evenly
 * so both factors keep comparable magnitudes in Float32. When ΔW has fewer than k singular values
 * (d_in or d_out < k) the missing columns are zero, so every target shares the adapter's rank k.
 */
export function truncateFactors(x: Factors, k: number): Factors {
  const dIn = x.a.rows;
  const dOut = x.b.cols;
  const a = zeros(dIn, k);
  const b = zeros(k, dOut);
  if (k === 0 || x.a.cols === 0) return { a, b };
  const { qa, qb, u, s, v } = factoredSvd(x);
  const t = Math.min(k, s.length);
  const us = zeros(u.rows, k);
  const vs = zeros(v.rows, k);
  for (let j = 0; j < t; j++) {
    const root = Math.sqrt(s[j]!);
    for (let i = 0; i < u.rows; i++) us.data[i * k + j] = u.data[i * u.cols + j]! * root;
    for (let i = 0; i < v.rows; i++) vs.data[i * k + j] = v.data[i * v.cols + j]! * root;
  }
  return { a: applyQ(qa, us), b: transpose(applyQ(qb, vs)) };
}
