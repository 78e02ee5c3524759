// The one shape in which an adapter crosses the engine worker's boundary: every factor in one flat
// Float32Array (per target A [d_in, r] then B [r, d_out], in key order) with the keys and dims beside
// it. One buffer to copy or transfer, and the receiver's factors are views into it, not a rebuilt copy.
import type { Adapter, LoraPair, TargetKey } from '../adapters/types';
import { engineAdapter, scaleInPlace, type EngineAdapter } from './adapter';

export interface WireAdapter {
  readonly rank: number;
  /** α/r still to multiply into A (1: already folded). */
  readonly scale: number;
  readonly keys: readonly TargetKey[];
  /** d_in, d_out per key. */
  readonly dims: Int32Array;
  readonly data: Float32Array;
}

/** One copy of the factors into a fresh buffer (the caller's arrays stay usable). */
export function toWire(rank: number, targets: ReadonlyMap<TargetKey, LoraPair>, scale = 1): WireAdapter {
  const keys = [...targets.keys()];
  const dims = new Int32Array(keys.length * 2);
  let n = 0;
  for (const p of targets.values()) n += p.A.length + p.B.length;
  const data = new Float32Array(n);
  let at = 0;
  keys.forEach((key, i) => {
    const p = targets.get(key)!;
    dims[2 * i] = p.dIn;
    dims[2 * i + 1] = p.dOut;
    data.set(p.A, at);
    data.set(p.B, (at += p.A.length));
    at += p.B.length;
  });
  return { rank, scale, keys, dims, data };
}

export const engineToWire = (a: EngineAdapter): WireAdapter => toWire(a.rank, a.targets, a.scale ?? 1);

/** The buffers a wire adapter owns, for postMessage's transfer list. */
export const wireBuffers = (w: WireAdapter): ArrayBuffer[] => [
  w.data.buffer as ArrayBuffer,
  w.dims.buffer as ArrayBuffer,
];

/** Views into the wire's buffer, keyed as sent. */
function targetsOf(w: WireAdapter): Map<TargetKey, LoraPair> {
  const targets = new Map<TargetKey, LoraPair>();
  let at = 0;
  w.keys.forEach((key, i) => {
    const dIn = w.dims[2 * i]!;
    const dOut = w.dims[2 * i + 1]!;
    const A = w.data.subarray(at, (at += dIn * w.rank));
    const B = w.data.subarray(at, (at += w.rank * dOut));
    targets.set(key, { dIn, dOut, A, B });
  });
  return targets;
}

/** The engine's form, folding any pending scale into the wire's own buffer: this is where an adapter
 *  is folded (the receiver owns that buffer, so no second copy is made). */
export function engineFromWire(w: WireAdapter): EngineAdapter {
  const targets = targetsOf(w);
  scaleInPlace(targets, w.scale);
  return engineAdapter(w.rank, targets);
}

/** The algebra's form of a folded wire adapter (α = r). */
export function adapterFromWire(w: WireAdapter): Adapter {
  return { rank: w.rank, alpha: w.rank * w.scale, targets: targetsOf(w) };
}
