// Fixture builders for adapter tests: seeded random adapters and the dense ΔW references they are
// checked against (small dims only; the code under test never builds these).
import { Matrix, SingularValueDecomposition } from 'ml-matrix';
import { targetKey, type Adapter, type LoraPair, type TargetKey } from '../../../main/adapters/types';

export interface Shape {
  layer: number;
  module: string;
  dIn: number;
  dOut: number;
}

export const SHAPES: Shape[] = [
  { layer: 0, module: 'q', dIn: 12, dOut: 10 },
  { layer: 0, module: 'v', dIn: 12, dOut: 6 },
  { layer: 1, module: 'mlp.down', dIn: 9, dOut: 12 },
];

/** mulberry32: tiny, seedable, good enough for test factors. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussians(next: () => number, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return out;
}

export function randomAdapter(over: { seed: number; rank?: number; alpha?: number; shapes?: Shape[] }): Adapter {
  const { seed, rank = 4, alpha = 8, shapes = SHAPES } = over;
  const next = rng(seed);
  const targets = new Map<TargetKey, LoraPair>();
  for (const s of shapes) {
    targets.set(targetKey(s.layer, s.module), {
      dIn: s.dIn,
      dOut: s.dOut,
      A: gaussians(next, s.dIn * rank),
      B: gaussians(next, rank * s.dOut),
    });
  }
  return { rank, alpha, targets };
}

/** Same adapter with one target's pair replaced (for validation cases). */
export function withPair(adapter: Adapter, key: TargetKey, pair: Partial<LoraPair>): Adapter {
  const targets = new Map(adapter.targets);
  targets.set(key, { ...adapter.targets.get(key)!, ...pair });
  return { ...adapter, targets };
}

/** Dense ΔW = (α/r)·A·B, row-major d_in × d_out. */
export function dense(adapter: Adapter, key: TargetKey): Float64Array {
  const { dIn, dOut, A, B } = adapter.targets.get(key)!;
  const r = adapter.rank;
  const s = r === 0 ? 0 : adapter.alpha / r;
  const out = new Float64Array(dIn * dOut);
  for (let i = 0; i < dIn; i++)
    for (let k = 0; k < r; k++)
      for (let j = 0; j < dOut; j++) out[i * dOut + j]! += s * A[i * r + k]! * B[k * dOut + j]!;
  return out;
}

export function denseSum(list: Adapter[], weights: number[], key: TargetKey): Float64Array {
  const parts = list.map((a) => dense(a, key));
  return parts[0]!.map((_, i) => parts.reduce((s, p, j) => s + weights[j]! * p[i]!, 0));
}

export function norm(x: Float64Array): number {
  return Math.sqrt(x.reduce((s, v) => s + v * v, 0));
}

/** ‖x − y‖ / ‖y‖ (absolute when y is 0). */
export function relErr(x: Float64Array, y: Float64Array): number {
  const d = norm(x.map((v, i) => v - y[i]!));
  const n = norm(y);
  return n === 0 ? d : d / n;
}

export function denseSingularValues(m: Float64Array, rows: number, cols: number): number[] {
  return new SingularValueDecomposition(Matrix.from1DArray(rows, cols, m), { autoTranspose: true }).diagonal;
}

export const keysOf = (a: Adapter): TargetKey[] => [...a.targets.keys()];
