// The KV cache between steps. A graph with ONNX-op attention returns the whole cache, present.{i}.key|value
// [b, kv, t, hd], fed back as past_key_values.{i}.key|value next step (transformers.js naming). A fused one
// (bundle.json io.lm.attention "fused", docs/bundle-format.md "Attention") returns only the step's keys and
// values, step.{i}.key|value [b, s, kv·hd]: the cache appends them to buffers of its own, [b, kv, capacity,
// hd], fed whole (the graph reads their first t − s positions). onnxruntime-node copies every output into a
// new buffer, so returning the whole cache each step cost more than attending to it.
import { KV_KINDS, pastName, presentName, stepName } from './graph-io';
import { EngineError } from './errors';
import type { BundleManifest } from './manifest';
import { float32, type Tensor } from './ort';

/** A fused cache's buffers: `end` positions of each row written; caches of any length ≤ end share them. */
interface Slab {
  readonly data: Record<string, Float32Array>; // past name → [b, kv, capacity, hd]
  readonly capacity: number;
  end: number;
  /** The feeds of these buffers, made on first use: the same object every step until the cache moves. */
  feeds?: Readonly<Record<string, Tensor>>;
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

export class KvCache {
  private constructor(
    private readonly manifest: BundleManifest,
    readonly batch: number,
    readonly length: number,
    /** ONNX-op attention: the past tensors, exactly [b, kv, length, hd]. */
    private readonly exact: Readonly<Record<string, Tensor>> | null,
    /** Fused attention: the buffers. */
    private readonly slab: Slab | null,
  ) {}

  static fused(manifest: BundleManifest): boolean {
    return manifest.io.lm.attention === 'fused';
  }

  /** Past length 0: the prefill step. */
  static empty(manifest: BundleManifest, batch: number): KvCache {
    if (KvCache.fused(manifest)) return new KvCache(manifest, batch, 0, null, newSlab(manifest, batch, 0));
    const { layers, kv_heads, head_dim } = manifest.architecture;
    const past: Record<string, Tensor> = {};
    for (let i = 0; i < layers; i++)
      for (const kind of KV_KINDS)
        past[pastName(i, kind)] = float32(new Float32Array(0), [batch, kv_heads, 0, head_dim]);
    return new KvCache(manifest, batch, 0, past, null);
  }

  /** The cache outputs lm.onnx is asked for: present.* (the whole cache) or step.* (fused). */
  static outputNames(manifest: BundleManifest): string[] {
    const name = KvCache.fused(manifest) ? stepName : presentName;
    return Array.from({ length: manifest.architecture.layers }, (_, i) => KV_KINDS.map((k) => name(i, k))).flat();
  }

  /** The past_key_values.* feeds: exact tensors, or a fused cache's buffers whole (one object per buffers,
   * so a decode step's feeds can be layered over it: lm.ts). */
  feeds(): Readonly<Record<string, Tensor>> {
    if (this.exact) return this.exact;
    const { kv_heads, head_dim } = this.manifest.architecture;
    const slab = this.slab!;
    const dims = [this.batch, kv_heads, slab.capacity, head_dim];
    return (slab.feeds ??= Object.freeze(
      Object.fromEntries(Object.entries(slab.data).map(([name, data]) => [name, float32(data, dims)])),
    ));
  }

  /** This cache, able to take `s` more positions in place: a fused cache whose buffers are full, or were
   * extended past it by another step (it was forked), moves to new ones first. Feed the result's feeds(). */
  reserve(s: number): KvCache {
    const slab = this.slab;
    if (!slab || (slab.end === this.length && this.length + s <= slab.capacity)) return this;
    const need = this.length + s;
    const capacity = roundUp(Math.max(need + (need >> 2), slab.end === this.length ? 2 * slab.capacity : 0), 64);
    const moved = newSlab(this.manifest, this.batch, capacity);
    const rows = Array.from({ length: this.batch }, (_, r) => r);
    copyRows(this.manifest, slab, moved, rows, this.length);
    return new KvCache(this.manifest, this.batch, this.length, null, moved);
  }

  /** The cache after a step of `s` positions run on this one's feeds (`reserve`d), from its outputs. */
  after(outputs: Readonly<Record<string, Tensor>>, s: number): KvCache {
    const m = this.manifest;
    const { layers, kv_heads: kv, head_dim: hd } = m.architecture;
    if (!this.slab) {
      const past: Record<string, Tensor> = {};
      for (let i = 0; i < layers; i++)
        for (const kind of KV_KINDS) past[pastName(i, kind)] = outputs[presentName(i, kind)]!;
      return new KvCache(m, this.batch, past[pastName(0, 'key')]!.dims[2]!, past, null);
    }
    const slab = this.slab;
    if (slab.end !== this.length || this.length + s > slab.capacity)
      throw new EngineError(
        'internal',
        `KV cache: append of ${s} at ${this.length} to buffers written to ${slab.end} of ${slab.capacity}`,
      );
    for (let i = 0; i < layers; i++)
      for (const kind of KV_KINDS) {
        const src = outputs[stepName(i, kind)]!.data as Float32Array; // [b, s, kv·hd]
        const dst = slab.data[pastName(i, kind)]!;
        for (let b = 0; b < this.batch; b++)
          for (let j = 0; j < s; j++)
            for (let h = 0; h < kv; h++) {
              const from = ((b * s + j) * kv + h) * hd;
              dst.set(src.subarray(from, from + hd), ((b * kv + h) * slab.capacity + this.length + j) * hd);
            }
      }
    slab.end = this.length + s;
    return new KvCache(m, this.batch, this.length + s, null, slab);
  }

  /** A cache of the rows `from` (an index may repeat: a one-row cache copied to every row); a copy. */
  rows(from: readonly number[]): KvCache {
    const m = this.manifest;
    if (this.slab) {
      const moved = newSlab(m, from.length, roundUp(this.length + 64, 64));
      copyRows(m, this.slab, moved, from, this.length);
      return new KvCache(m, from.length, this.length, null, moved);
    }
    const past: Record<string, Tensor> = {};
    for (const [name, t] of Object.entries(this.exact!)) {
      const all = t.data as Float32Array;
      const size = all.length / t.dims[0]!;
      const data = new Float32Array(size * from.length);
      from.forEach((r, j) => data.set(all.subarray(r * size, (r + 1) * size), j * size));
      past[name] = float32(data, [from.length, ...t.dims.slice(1)]);
    }
    return new KvCache(m, from.length, this.length, past, null);
  }
}

function newSlab(m: BundleManifest, batch: number, capacity: number): Slab {
  const { layers, kv_heads, head_dim } = m.architecture;
  const data: Record<string, Float32Array> = {};
  for (let i = 0; i < layers; i++)
    for (const kind of KV_KINDS) data[pastName(i, kind)] = new Float32Array(batch * kv_heads * capacity * head_dim);
  return { data, capacity, end: 0 };
}

/** Positions [0, length) of rows `from` of `src` into rows 0… of `dst`. */
function copyRows(m: BundleManifest, src: Slab, dst: Slab, from: readonly number[], length: number): void {
  const { kv_heads: kv, head_dim: hd } = m.architecture;
  for (const [name, s] of Object.entries(src.data)) {
    const d = dst.data[name]!;
    from.forEach((r, j) => {
      for (let h = 0; h < kv; h++) {
        const at = (r * kv + h) * src.capacity * hd;
        d.set(s.subarray(at, at + length * hd), (j * kv + h) * dst.capacity * hd);
      }
    });
  }
  dst.end = length;
}
