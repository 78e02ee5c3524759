// A train step whose memory is one layer's (docs/distill.md "Layered train step"): the bundle's
// `train_step.kind` "layered" ships one decoder layer's forward and its vector-Jacobian product, reused
// for every layer, and the head with the loss. Here: the embedding gather, the forward layer by layer
// keeping only each layer's input, the head, the backward layer by layer (each layer's forward is
// recomputed inside its vjp graph, so this is checkpointing by construction), then the global-norm clip
// and Adam of model.distill_objective.adam_update. The base's weights are read once, by span, from the
// bundle's own files, and kept as tensors every step and every bucket reuses.
import { closeSync, openSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { invalid } from './errors';
import type { BundleManifest, TrainStepEntry, WeightSpan } from './manifest';
import { float16, float32, floats, Session, type SessionOptions, type Tensor } from './ort';
import type { Bucket, StepRunner } from './step-runner';

type LayeredWeights = NonNullable<TrainStepEntry['weights']>;

/** float16 bits → float32, by table (65,536 entries: 256 KiB once). */
let halfTable: Float32Array | null = null;
function halfToFloat(): Float32Array {
  if (halfTable) return halfTable;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) t[h] = sign * frac * 2 ** -24;
    else if (exp === 31) t[h] = frac ? NaN : sign * Infinity;
    else t[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return (halfTable = t);
}

export function halfToFloat32(bits: Uint16Array): Float32Array {
  const t = halfToFloat();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = t[bits[i]!]!;
  return out;
}

/** The base's weights as tensors, each span read once (a span two graphs share, e.g. a tied embedding,
 * is one tensor). Little-endian hosts only, as ORT's own external data reader. */
export class WeightStore {
  private readonly tensors = new Map<string, Tensor>();
  private resident = 0;

  constructor(private readonly dir: string) {}

  /** Bytes held by the tensors read so far. */
  get bytes(): number {
    return this.resident;
  }

  /** The span as a tensor of `as` (float16 spans widen to float32 when the graph wants float32). */
  tensor(span: WeightSpan, as: string, where: string): Tensor {
    const key = `${span.file}:${span.offset}:${span.length}:${as}`;
    let t = this.tensors.get(key);
    if (t) return t;
    if (as !== 'float32' && as !== 'float16')
      throw invalid(`${where}: the graph takes ${as}, but a weight span is float32 or float16`);
    if (as === 'float16' && span.dtype === 'float32')
      throw invalid(`${where}: the graph takes float16, but the span in ${span.file} is float32`);
    const bytes = this.read(span, where);
    if (span.dtype === 'float16') {
      const bits = new Uint16Array(bytes.buffer, bytes.byteOffset, span.length / 2);
      t = as === 'float16' ? float16(bits, span.shape) : float32(halfToFloat32(bits), span.shape);
    } else t = float32(new Float32Array(bytes.buffer, bytes.byteOffset, span.length / 4), span.shape);
    this.resident += as === 'float32' ? (span.length / (span.dtype === 'float16' ? 2 : 4)) * 4 : span.length;
    this.tensors.set(key, t);
    return t;
  }

  private read(span: WeightSpan, where: string): Uint8Array {
    const out = new Uint8Array(span.length);
    const fd = openSync(join(this.dir, span.file), 'r');
    try {
      let done = 0;
      while (done < span.length) {
        const n = readSync(fd, out, done, Math.min(span.length - done, 1 << 30), span.offset + done);
        if (n === 0)
          throw invalid(
            `${where}: ${span.file} ends before ${span.offset + span.length} bytes (span offset ${span.offset})`,
          );
        done += n;
      }
    } finally {
      closeSync(fd);
    }
    return out;
  }
}

export interface AdamConfig {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly maxNorm: number;
}

/** model.distill_objective.clip_scale: the factor that brings the global gradient norm down to maxNorm. */
export function clipScale(grads: readonly Float32Array[], maxNorm: number): number {
  let sum = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) sum += g[i]! * g[i]!;
  return Math.min(1, maxNorm / (Math.sqrt(sum) + 1e-6));
}

/** model.distill_objective.adam_update: one Adam step (bias-corrected, no weight decay) after the global-norm
 * clip; `step` is 1-based. Returns new arrays; the inputs are not changed. */
export function adamUpdate(
  params: readonly { p: Float32Array; g: Float32Array; m: Float32Array; v: Float32Array }[],
  step: number,
  lr: number,
  cfg: AdamConfig,
): { p: Float32Array; m: Float32Array; v: Float32Array }[] {
  const scale = clipScale(
    params.map((x) => x.g),
    cfg.maxNorm,
  );
  const c1 = 1 - cfg.beta1 ** step;
  const c2 = 1 - cfg.beta2 ** step;
  return params.map(({ p, g, m, v }) => {
    const np = new Float32Array(p.length);
    const nm = new Float32Array(p.length);
    const nv = new Float32Array(p.length);
    for (let i = 0; i < p.length; i++) {
      const gi = g[i]! * scale;
      const mi = (nm[i] = cfg.beta1 * m[i]! + (1 - cfg.beta1) * gi);
      const vi = (nv[i] = cfg.beta2 * v[i]! + (1 - cfg.beta2) * gi * gi);
      np[i] = p[i]! - (lr * (mi / c1)) / (Math.sqrt(vi / c2) + cfg.eps);
    }
    return { p: np, m: nm, v: nv };
  });
}

function layeredWeights(manifest: BundleManifest): LayeredWeights {
  const w = manifest.train_step?.weights;
  if (manifest.train_step?.kind !== 'layered' || !w)
    throw invalid(`bundle ${manifest.id}: train_step is not kind "layered" with weights`);
  return w;
}

/** One bucket's layered step: three sessions over the shared weights. */
export class LayeredStep implements StepRunner {
  readonly kind = 'layered';
  private readonly zeros: Record<string, Tensor> = {};
  private readonly layerWeights: Record<string, Tensor>[];
  private readonly headWeights: Record<string, Tensor>;
  private readonly embed: Tensor;
  private readonly trained: ReadonlySet<number>;
  private readonly adam: AdamConfig;

  private constructor(
    readonly manifest: BundleManifest,
    readonly bucket: Bucket,
    private readonly layer: Session,
    private readonly vjp: Session,
    private readonly head: Session,
    store: WeightStore,
  ) {
    const entry = manifest.train_step!;
    const w = layeredWeights(manifest);
    const typeOf = (s: Session, name: string) => s.inputs.find((i) => i.name === name)?.type ?? 'float32';
    this.layerWeights = w.layers.map((names, i) =>
      Object.fromEntries(
        Object.entries(names).map(([n, span]) => [
          n,
          store.tensor(span, typeOf(layer, n), `train_step.weights.layers.${i}.${n}`),
        ]),
      ),
    );
    this.headWeights = Object.fromEntries(
      Object.entries(w.head).map(([n, span]) => [
        n,
        store.tensor(span, typeOf(head, n), `train_step.weights.head.${n}`),
      ]),
    );
    this.embed = store.tensor(w.embed, w.embed.dtype, 'train_step.weights.embed');
    const r = entry.rank;
    for (const t of manifest.lora.targets) {
      this.zeros[`lora.${t.module}.A`] = float32(new Float32Array(t.d_in * r), [t.d_in, r]);
      this.zeros[`lora.${t.module}.B`] = float32(new Float32Array(r * t.d_out), [r, t.d_out]);
    }
    this.trained = new Set(manifest.lora.layers);
    const adam = entry.adam ?? { beta1: 0.9, beta2: 0.999, eps: 1e-8 };
    this.adam = { ...adam, maxNorm: entry.max_norm };
  }

  static async open(
    dir: string,
    manifest: BundleManifest,
    bucket: Bucket,
    options: SessionOptions,
    store: WeightStore,
  ): Promise<LayeredStep> {
    layeredWeights(manifest);
    const { layer, layer_vjp: vjp, head } = bucket;
    if (!layer || !vjp || !head)
      throw invalid(`bundle ${manifest.id}: layered bucket ${bucket.batch}x${bucket.length} lacks a graph`);
    // As the whole step: every core unless told otherwise, threads asleep between runs.
    const opts: SessionOptions = {
      ...options,
      intraOpNumThreads: options.intraOpNumThreads ?? availableParallelism(),
      allowSpinning: false,
    };
    const sessions = await Promise.all([layer, vjp, head].map((f) => Session.open(join(dir, f), opts)));
    try {
      return new LayeredStep(manifest, bucket, sessions[0]!, sessions[1]!, sessions[2]!, store);
    } catch (err) {
      await Promise.all(sessions.map((s) => s.dispose()));
      throw err;
    }
  }

  /** The provider the layer graphs run on (after any fallback). */
  get provider(): string {
    return this.layer.provider;
  }

  /** h₀: the embedding rows of input_ids (float16 rows widened). */
  private embedRows(ids: BigInt64Array): Float32Array {
    const d = this.manifest.architecture.hidden;
    const vocab = this.embed.dims[0]!;
    const out = new Float32Array(ids.length * d);
    const half = this.embed.type === 'float16' ? halfToFloat() : null;
    const src = this.embed.data as Float32Array | Uint16Array;
    for (let t = 0; t < ids.length; t++) {
      const id = Number(ids[t]!);
      if (!(id >= 0 && id < vocab))
        throw invalid(`input_ids: token id ${id} at ${t} is outside the vocabulary (${vocab})`);
      if (half) for (let j = 0; j < d; j++) out[t * d + j] = half[src[id * d + j]!]!;
      else out.set((src as Float32Array).subarray(id * d, (id + 1) * d), t * d);
    }
    return out;
  }

  private loraOf(feeds: Readonly<Record<string, Tensor>>, i: number): Record<string, Tensor> {
    if (!this.trained.has(i)) return this.zeros;
    const out: Record<string, Tensor> = {};
    for (const t of this.manifest.lora.targets)
      for (const f of ['A', 'B']) out[`lora.${t.module}.${f}`] = feeds[`lora.${i}.${t.module}.${f}`]!;
    return out;
  }

  /** The whole graph's step: feeds and outputs by the same names (docs/bundle-format.md "train_step"). */
  async run(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    const { batch: b, length: s } = this.bucket;
    const m = this.manifest;
    const d = m.architecture.hidden;
    const L = m.architecture.layers;
    const common = { attention_mask: feeds.attention_mask!, position_ids: feeds.position_ids! };
    const kept: (Tensor | null)[] = [float32(this.embedRows(feeds.input_ids!.data as BigInt64Array), [b, s, d])];
    for (let i = 0; i < L; i++) {
      const out = await this.layer.run(
        { hidden: kept[i]!, ...common, ...this.layerWeights[i]!, ...this.loraOf(feeds, i) },
        ['hidden_out'],
      );
      kept.push(out.hidden_out!);
    }
    const top = kept.pop()!;
    const head = await this.head.run({
      hidden: top,
      ...this.headWeights,
      answer_mask: feeds.answer_mask!,
      teacher_ids: feeds.teacher_ids!,
      teacher_logp: feeds.teacher_logp!,
    });
    const loss = head.loss!;
    let g = head.grad_hidden!;
    const grads = new Map<string, Float32Array>();
    const modules = m.lora.targets.map((t) => t.module);
    const lowest = Math.min(...this.trained);
    for (let i = L - 1; i >= lowest; i--) {
      const trained = this.trained.has(i);
      const fetch = [
        ...(i > lowest ? ['grad_in'] : []),
        ...(trained ? modules.flatMap((mod) => [`grad.${mod}.A`, `grad.${mod}.B`]) : []),
      ];
      const out = await this.vjp.run(
        { hidden: kept[i]!, ...common, ...this.layerWeights[i]!, ...this.loraOf(feeds, i), grad_out: g },
        fetch,
      );
      kept[i] = null;
      if (trained)
        for (const mod of modules)
          for (const f of ['A', 'B']) grads.set(`${i}.${mod}.${f}`, floats(out[`grad.${mod}.${f}`]!));
      if (i > lowest) g = out.grad_in!;
    }
    const keys = [...grads.keys()];
    const updated = adamUpdate(
      keys.map((k) => ({
        p: floats(feeds[`lora.${k}`]!),
        g: grads.get(k)!,
        m: floats(feeds[`m.${k}`]!),
        v: floats(feeds[`v.${k}`]!),
      })),
      floats(feeds.step!)[0]!,
      floats(feeds.lr!)[0]!,
      this.adam,
    );
    const result: Record<string, Tensor> = { loss };
    keys.forEach((k, j) => {
      const dims = feeds[`lora.${k}`]!.dims;
      result[`new_lora.${k}`] = float32(updated[j]!.p, dims);
      result[`new_m.${k}`] = float32(updated[j]!.m, dims);
      result[`new_v.${k}`] = float32(updated[j]!.v, dims);
    });
    return result;
  }

  async dispose(): Promise<void> {
    await Promise.all([this.layer.dispose(), this.vjp.dispose(), this.head.dispose()]);
  }
}
