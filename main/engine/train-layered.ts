// A train step whose memory is one layer's (docs/distill.md "Layered train step"): the bundle's
// `train_step.kind` "layered" ships one decoder layer's forward and its vector-Jacobian product, reused
// for every layer, and the head with the loss. Here: the embedding gather, the forward layer by layer
// keeping each layer's input (and, as far as a memory budget goes, what its backward needs: `saved.*`),
// the head, the backward layer by layer (the bwd graph from `saved.*`, else the vjp graph, which
// recomputes the layer's forward: checkpointing), then the global-norm clip and Adam of
// model.distill_objective.adam_update. The base's weights are read by span from the bundle's own files
// into buffers every step and every bucket reuses.
import { closeSync, openSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { headRows, keepPlan } from './distill-memory';
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

/** One graph input's weight: a buffer that one span after another is read into (every layer's span of
 * the same name has the same shape and dtype), and the tensor over it that the graph is fed. */
interface Slot {
  readonly bytes: Uint8Array;
  /** float16 bytes widened here when the graph takes float32; else null (the tensor is over `bytes`). */
  readonly wide: Float32Array | null;
  readonly tensor: Tensor;
}

/** Reads the base's weights by span when a graph needs them (docs/distill.md "Memory before a run"):
 * each span into a buffer reused for every layer, so a layered step holds two layers' weights (the one
 * running and the next, read meanwhile) and the head's, not the model's, beside the bundle's own
 * lm.onnx session. Buckets of one bundle share a reader and take turns (`exclusive`). Little-endian
 * hosts only, as ORT's own external data reader. */
export class WeightReader {
  private readonly slots = new Map<string, Slot>();
  private readonly loaded = new Map<string, string>();
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly dir: string) {}

  /** Bytes of the buffers held now. */
  get bytes(): number {
    let n = 0;
    for (const s of this.slots.values()) n += s.bytes.byteLength + (s.wide?.byteLength ?? 0);
    return n;
  }

  /** Runs `f` after every earlier caller's `f` has finished: the buffers are shared. */
  exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.turn.then(f, f);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** The slot `key`, made for `span` read as `as` on first use. */
  private slot(key: string, span: WeightSpan, as: string, where: string): Slot {
    let s = this.slots.get(key);
    if (s) return s;
    if (as !== 'float32' && as !== 'float16')
      throw invalid(`${where}: the graph takes ${as}, but a weight span is float32 or float16`);
    if (as === 'float16' && span.dtype === 'float32')
      throw invalid(`${where}: the graph takes float16, but the span in ${span.file} is float32`);
    const bytes = new Uint8Array(span.length);
    const count = span.length / (span.dtype === 'float16' ? 2 : 4);
    let wide: Float32Array | null = null;
    let tensor: Tensor;
    if (span.dtype === 'float16' && as === 'float32') tensor = float32((wide = new Float32Array(count)), span.shape);
    else if (span.dtype === 'float16') tensor = float16(new Uint16Array(bytes.buffer, 0, count), span.shape);
    else tensor = float32(new Float32Array(bytes.buffer, 0, count), span.shape);
    s = { bytes, wide, tensor };
    this.slots.set(key, s);
    return s;
  }

  /** The spans `named` as tensors in the buffers of `set` (read unless `set` already holds them).
   * `where` names the spans' place in bundle.json for errors. */
  tensors(
    set: string,
    named: Readonly<Record<string, WeightSpan>>,
    types: Readonly<Record<string, string>>,
    where: string,
  ): Record<string, Tensor> {
    const out: Record<string, Tensor> = {};
    const spans = Object.entries(named);
    const id = spans.map(([, s]) => `${s.file}:${s.offset}`).join(',');
    const fresh = this.loaded.get(set) !== id;
    this.loaded.delete(set); // until every span below is in (a failed read leaves the set unknown)
    const fds = new Map<string, number>();
    try {
      for (const [n, span] of spans) {
        const at = `${where}.${n}`;
        const s = this.slot(`${set}:${n}`, span, types[n] ?? 'float32', at);
        if (s.bytes.byteLength !== span.length)
          throw invalid(`${at}: ${span.length} bytes, but the same weight of another layer has ${s.bytes.byteLength}`);
        if (fresh) {
          let fd = fds.get(span.file);
          if (fd === undefined) fds.set(span.file, (fd = openSync(join(this.dir, span.file), 'r')));
          readFully(fd, s.bytes, span.offset, `${at}: ${span.file}`);
          if (s.wide) widen(new Uint16Array(s.bytes.buffer, 0, s.wide.length), s.wide);
        }
        out[n] = s.tensor;
      }
    } finally {
      for (const fd of fds.values()) closeSync(fd);
    }
    this.loaded.set(set, id);
    return out;
  }

  /** Rows `ids` of the [rows, cols] span as float32, row after row (float16 widened). */
  rows(span: WeightSpan, ids: ArrayLike<bigint>, where: string): Float32Array {
    const [vocab, d] = span.shape as [number, number];
    const size = span.dtype === 'float16' ? 2 : 4;
    const out = new Float32Array(ids.length * d);
    const half = span.dtype === 'float16' ? new Uint16Array(d) : null;
    const fd = openSync(join(this.dir, span.file), 'r');
    try {
      for (let t = 0; t < ids.length; t++) {
        const id = Number(ids[t]!);
        if (!(id >= 0 && id < vocab))
          throw invalid(`input_ids: token id ${id} at ${t} is outside the vocabulary (${vocab})`);
        const at = span.offset + id * d * size;
        if (half) {
          readFully(fd, new Uint8Array(half.buffer), at, `${where}: ${span.file}`);
          widen(half, out.subarray(t * d, (t + 1) * d));
        } else readFully(fd, new Uint8Array(out.buffer, t * d * 4, d * 4), at, `${where}: ${span.file}`);
      }
    } finally {
      closeSync(fd);
    }
    return out;
  }

  /** Lets go of every buffer (the next read allocates again). */
  release(): void {
    this.slots.clear();
    this.loaded.clear();
  }
}

function widen(bits: Uint16Array, out: Float32Array): void {
  const t = halfToFloat();
  for (let i = 0; i < bits.length; i++) out[i] = t[bits[i]!]!;
}

function readFully(fd: number, into: Uint8Array, position: number, where: string): void {
  let done = 0;
  while (done < into.byteLength) {
    const n = readSync(fd, into, done, Math.min(into.byteLength - done, 1 << 30), position + done);
    if (n === 0) throw invalid(`${where} ends before ${position + into.byteLength} bytes (span offset ${position})`);
    done += n;
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

/** Session options, the head's rows per part (default headRows of the vocabulary), and the bytes the
 * forward may keep for the backward (default KEEP_BYTES: keepPlan). */
export interface LayeredOptions extends SessionOptions {
  readonly headRows?: number;
  readonly keepBytes?: number;
}

/** One bucket's layered step: three sessions; the weights are read by `reader` as the step goes. */
export class LayeredStep implements StepRunner {
  readonly kind = 'layered';
  private readonly zeros: Record<string, Tensor> = {};
  private readonly layerTypes: Record<string, string>;
  private readonly headTypes: Record<string, string>;
  private readonly trained: ReadonlySet<number>;
  private readonly adam: AdamConfig;
  private readonly weights: LayeredWeights;
  private readonly headPart: number;
  /** The forward's `saved.*` outputs, the backward graph's inputs and the layers that keep them (keepPlan). */
  private readonly savedNames: readonly string[];
  private readonly bwdInputs: ReadonlySet<string>;
  private readonly keeps: ReadonlySet<number>;

  private constructor(
    readonly manifest: BundleManifest,
    readonly bucket: Bucket,
    private readonly layer: Session,
    private readonly vjp: Session,
    private readonly head: Session,
    private readonly bwd: Session | null,
    private readonly reader: WeightReader,
    headPart: number | undefined,
    keepBytes: number | undefined,
  ) {
    const entry = manifest.train_step!;
    this.headPart = headPart ?? headRows(manifest.architecture.vocab);
    const w = (this.weights = layeredWeights(manifest));
    const types = (s: Session) => Object.fromEntries(s.inputs.map((i) => [i.name, i.type]));
    this.layerTypes = types(layer);
    this.headTypes = types(head);
    // Every layer's weights go through the same buffers: the same names, shapes and dtypes as layer 0's.
    const first = w.layers[0] ?? {};
    w.layers.forEach((l, i) => {
      for (const [n, s] of Object.entries(first)) {
        const o = l[n];
        if (!o || o.dtype !== s.dtype || o.shape.join(',') !== s.shape.join(','))
          throw invalid(
            `train_step.weights.layers.${i}.${n}: ${o ? `${o.dtype} [${o.shape.join(', ')}]` : 'absent'}, but layer 0's is ${s.dtype} [${s.shape.join(', ')}] (one graph serves every layer)`,
          );
      }
      if (Object.keys(l).length !== Object.keys(first).length)
        throw invalid(`train_step.weights.layers.${i}: other names than layer 0's (one graph serves every layer)`);
    });
    const r = entry.rank;
    for (const t of manifest.lora.targets) {
      this.zeros[`lora.${t.module}.A`] = float32(new Float32Array(t.d_in * r), [t.d_in, r]);
      this.zeros[`lora.${t.module}.B`] = float32(new Float32Array(r * t.d_out), [r, t.d_out]);
    }
    this.trained = new Set(manifest.lora.layers);
    this.savedNames = bwd ? layer.outputs.map((o) => o.name).filter((n) => n.startsWith('saved.')) : [];
    this.bwdInputs = new Set(bwd?.inputs.map((i) => i.name) ?? []);
    const plan = keepPlan(manifest, bucket, keepBytes);
    this.keeps = new Set(bwd ? plan.saved : []);
    const adam = entry.adam ?? { beta1: 0.9, beta2: 0.999, eps: 1e-8 };
    this.adam = { ...adam, maxNorm: entry.max_norm };
  }

  static async open(
    dir: string,
    manifest: BundleManifest,
    bucket: Bucket,
    options: LayeredOptions,
    reader: WeightReader,
  ): Promise<LayeredStep> {
    layeredWeights(manifest);
    const { layer, layer_vjp: vjp, head, layer_bwd: bwd } = bucket;
    if (!layer || !vjp || !head)
      throw invalid(`bundle ${manifest.id}: layered bucket ${bucket.batch}x${bucket.length} lacks a graph`);
    // As the whole step: every core unless told otherwise, threads asleep between runs.
    const { headRows: part, keepBytes, ...session } = options;
    const opts: SessionOptions = {
      ...session,
      intraOpNumThreads: options.intraOpNumThreads ?? availableParallelism(),
      allowSpinning: options.allowSpinning ?? false,
    };
    const files = [layer, vjp, head, ...(bwd ? [bwd] : [])];
    const sessions = await Promise.all(files.map((f) => Session.open(join(dir, f), opts)));
    try {
      const [l, v, h, b] = sessions as [Session, Session, Session, Session | undefined];
      return new LayeredStep(manifest, bucket, l, v, h, b ?? null, reader, part, keepBytes);
    } catch (err) {
      await Promise.all(sessions.map((s) => s.dispose()));
      throw err;
    }
  }

  /** The provider the layer graphs run on (after any fallback). */
  get provider(): string {
    return this.layer.provider;
  }

  /** Layer i's weights, in buffer set i % 2 (the other set holds the layer before or after). */
  private layerWeights(i: number): Record<string, Tensor> {
    return this.reader.tensors(
      `layer${i % 2}`,
      this.weights.layers[i]!,
      this.layerTypes,
      `train_step.weights.layers.${i}`,
    );
  }

  private loraOf(feeds: Readonly<Record<string, Tensor>>, i: number): Record<string, Tensor> {
    if (!this.trained.has(i)) return this.zeros;
    const out: Record<string, Tensor> = {};
    for (const t of this.manifest.lora.targets)
      for (const f of ['A', 'B']) out[`lora.${t.module}.${f}`] = feeds[`lora.${i}.${t.module}.${f}`]!;
    return out;
  }

  /** The whole graph's step: feeds and outputs by the same names (docs/bundle-format.md "train_step"). */
  run(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    return this.reader.exclusive(() => this.step(feeds));
  }

  /** loss and grad_hidden of the head over the answer rows, in parts of at most headRows rows. */
  private async headLoss(
    top: Tensor,
    feeds: Readonly<Record<string, Tensor>>,
  ): Promise<{ loss: Tensor; grad: Tensor }> {
    const weights = this.reader.tensors('head', this.weights.head, this.headTypes, 'train_step.weights.head');
    const mask = floats(feeds.answer_mask!);
    const rows: number[] = [];
    for (let j = 0; j < mask.length; j++) if (mask[j] !== 0) rows.push(j);
    const per = this.headPart;
    const fixed = { hidden: top, ...weights, teacher_ids: feeds.teacher_ids!, teacher_logp: feeds.teacher_logp! };
    if (rows.length <= per) return this.headRun({ ...fixed, answer_mask: feeds.answer_mask! });
    // Σ over parts of (part's mean) · (part's weight sum) / (all weights' sum): distill_loss's mean over rows.
    let total = 0;
    for (const j of rows) total += mask[j]!;
    let loss = 0;
    let grad: Float32Array | null = null;
    for (let at = 0; at < rows.length; at += per) {
      const part = new Float32Array(mask.length);
      let w = 0;
      for (const j of rows.slice(at, at + per)) w += part[j] = mask[j]!;
      const out = await this.headRun({ ...fixed, answer_mask: float32(part, feeds.answer_mask!.dims) });
      const share = w / total;
      loss += floats(out.loss)[0]! * share;
      const g = floats(out.grad);
      if (!grad) grad = new Float32Array(g.length);
      for (let k = 0; k < g.length; k++) grad[k]! += g[k]! * share;
    }
    return { loss: float32(Float32Array.of(loss), []), grad: float32(grad!, top.dims) };
  }

  private async headRun(feeds: Record<string, Tensor>): Promise<{ loss: Tensor; grad: Tensor }> {
    const out = await this.head.run(feeds, ['loss', 'grad_hidden']);
    return { loss: out.loss!, grad: out.grad_hidden! };
  }

  private async step(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    const { batch: b, length: s } = this.bucket;
    const m = this.manifest;
    const d = m.architecture.hidden;
    const L = m.architecture.layers;
    const common = { attention_mask: feeds.attention_mask!, position_ids: feeds.position_ids! };
    const ids = feeds.input_ids!.data as BigInt64Array;
    const kept: (Tensor | null)[] = [
      float32(this.reader.rows(this.weights.embed, ids, 'train_step.weights.embed'), [b, s, d]),
    ];
    // Forward: layer i runs while layer i + 1's weights are read into the other buffers.
    // The layers in `keeps` also return what their backward needs (saved.*): no forward recomputed there.
    const saved: (Record<string, Tensor> | null)[] = Array.from({ length: L }, () => null);
    let weights = this.layerWeights(0);
    for (let i = 0; i < L; i++) {
      const keep = this.keeps.has(i);
      const pending = this.layer.run(
        { hidden: kept[i]!, ...common, ...weights, ...this.loraOf(feeds, i) },
        keep ? ['hidden_out', ...this.savedNames] : ['hidden_out'],
      );
      const next = i + 1 < L ? this.layerWeights(i + 1) : null;
      const out = await pending;
      kept.push(out.hidden_out!);
      if (keep) saved[i] = Object.fromEntries(this.savedNames.map((n) => [n, out[n]!]));
      if (next) weights = next;
    }
    const top = kept.pop()!;
    const head = await this.headLoss(top, feeds);
    let g = head.grad;
    const grads = new Map<string, Float32Array>();
    const modules = m.lora.targets.map((t) => t.module);
    const lowest = Math.min(...this.trained);
    // Backward from the top: layers L−1 and L−2 are still in their buffers from the forward.
    weights = this.layerWeights(L - 1);
    for (let i = L - 1; i >= lowest; i--) {
      const trained = this.trained.has(i);
      const fetch = [
        ...(i > lowest ? ['grad_in'] : []),
        ...(trained ? modules.flatMap((mod) => [`grad.${mod}.A`, `grad.${mod}.B`]) : []),
      ];
      const all = { hidden: kept[i]!, ...common, ...weights, ...this.loraOf(feeds, i), grad_out: g };
      const s = saved[i];
      saved[i] = null;
      const pending = s
        ? this.bwd!.run(
            Object.fromEntries(Object.entries({ ...all, ...s }).filter(([n]) => this.bwdInputs.has(n))),
            fetch,
          )
        : this.vjp.run(all, fetch);
      const next = i > lowest ? this.layerWeights(i - 1) : null;
      const out = await pending;
      kept[i] = null;
      if (trained)
        for (const mod of modules)
          for (const f of ['A', 'B']) grads.set(`${i}.${mod}.${f}`, floats(out[`grad.${mod}.${f}`]!));
      if (next) {
        g = out.grad_in!;
        weights = next;
      }
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
    const result: Record<string, Tensor> = { loss: head.loss };
    keys.forEach((k, j) => {
      const dims = feeds[`lora.${k}`]!.dims;
      result[`new_lora.${k}`] = float32(updated[j]!.p, dims);
      result[`new_m.${k}`] = float32(updated[j]!.m, dims);
      result[`new_v.${k}`] = float32(updated[j]!.v, dims);
    });
    return result;
  }

  async dispose(): Promise<void> {
    await Promise.all([this.layer.dispose(), this.vjp.dispose(), this.head.dispose(), this.bwd?.dispose()]);
  }
}
