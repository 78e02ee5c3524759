// The KV cache between steps: what the graph returns as present.{i}.key|value [b, kv, t, hd] is fed
// back as past_key_values.{i}.key|value on the next step (transformers.js modeling_utils naming).
import { KV_KINDS, pastName, presentName } from './graph-io';
import type { BundleManifest } from './manifest';
import { float32, type Tensor } from './ort';

export class KvCache {
  private constructor(
    private readonly past: Record<string, Tensor>,
    readonly length: number,
  ) {}

  /** Past length 0: the prefill step. */
  static empty(manifest: BundleManifest, batch: number): KvCache {
    const { layers, kv_heads, head_dim } = manifest.architecture;
    const past: Record<string, Tensor> = {};
    for (let i = 0; i < layers; i++)
      for (const kind of KV_KINDS)
        past[pastName(i, kind)] = float32(new Float32Array(0), [batch, kv_heads, 0, head_dim]);
    return new KvCache(past, 0);
  }

  static fromOutputs(manifest: BundleManifest, outputs: Readonly<Record<string, Tensor>>): KvCache {
    const past: Record<string, Tensor> = {};
    for (let i = 0; i < manifest.architecture.layers; i++) {
      for (const kind of KV_KINDS) past[pastName(i, kind)] = outputs[presentName(i, kind)]!;
    }
    return new KvCache(past, past[pastName(0, 'key')]!.dims[2]!);
  }

  static outputNames(manifest: BundleManifest): string[] {
    return Array.from({ length: manifest.architecture.layers }, (_, i) =>
      KV_KINDS.map((k) => presentName(i, k)),
    ).flat();
  }

  feeds(): Readonly<Record<string, Tensor>> {
    return this.past;
  }
}
