// One distillation step through a bundle's train-step graph (docs/bundle-format.md "train_step"): the
// graph takes the LoRA factors, Adam's moments, step, lr, the student rows and the teacher's top-k, and
// returns the updated factors and moments and the loss. Shapes are static, one graph per bucket.
import { availableParallelism } from 'node:os';
import { svdTruncate } from '../adapters/svd';
import type { LoraPair, TargetKey } from '../adapters/types';
import { engineAdapter, type EngineAdapter } from './adapter';
import { invalid } from './errors';
import type { BundleManifest, TrainStepEntry } from './manifest';
import { float32, floats, int64, Session, type SessionOptions, type Tensor } from './ort';
import { seededRng } from './sampler';
import { bucketKey, stepKind, type Bucket, type StepRunner } from './step-runner';
import { LayeredStep, WeightReader, type LayeredOptions } from './train-layered';

export { bucketKey, stepKind, type Bucket, type StepRunner } from './step-runner';

/** Opens the bucket's step of the bundle's kind; a layered step reads its weights through `reader`
 * (one per bundle, so buckets share its buffers). */
export async function openStepRunner(
  dir: string,
  manifest: BundleManifest,
  bucket: Bucket,
  options: LayeredOptions = {},
  reader: WeightReader = new WeightReader(dir),
): Promise<StepRunner> {
  return stepKind(manifest) === 'layered'
    ? LayeredStep.open(dir, manifest, bucket, options, reader)
    : TrainStepGraph.open(dir, manifest, bucket, options);
}

/** Factors and Adam moments by graph input name (`lora.{i}.{module}.A`, `m.…`, `v.…`). */
export type TrainState = ReadonlyMap<string, Float32Array>;

export function trainStepEntry(manifest: BundleManifest): TrainStepEntry {
  const entry = manifest.train_step;
  if (!entry)
    throw invalid(
      `bundle ${manifest.id} has no train-step graph, so it can compile Instant only (re-export it: python -m pskills_train.export.train_step BUNDLE)`,
    );
  return entry;
}

/** Rows a distillation step takes: the bundle's smallest bucket batch (docs/distill.md "Layered train
 * step": a real base's layered buckets take 4, the default bundle's 8); larger ones are for benches. */
export function stepRows(manifest: BundleManifest): number {
  return Math.min(...trainStepEntry(manifest).buckets.map((b) => b.batch));
}

/** The buckets of stepRows' batch, shortest first. */
export function stepBuckets(manifest: BundleManifest): Bucket[] {
  const rows = stepRows(manifest);
  return trainStepEntry(manifest)
    .buckets.filter((b) => b.batch === rows)
    .sort((a, b) => a.length - b.length);
}

/** The smallest bucket of stepRows' batch whose length holds `tokens`, else null. */
export function bucketFor(manifest: BundleManifest, tokens: number): Bucket | null {
  return stepBuckets(manifest).find((b) => b.length >= tokens) ?? null;
}

function targets(manifest: BundleManifest): { key: TargetKey; dIn: number; dOut: number }[] {
  return manifest.lora.layers.flatMap((i) =>
    manifest.lora.targets.map((t) => ({ key: `${i}.${t.module}` as TargetKey, dIn: t.d_in, dOut: t.d_out })),
  );
}

/** Factors of rank r to start from: the init adapter (cut to r by svd when larger; its extra slots filled
 * as in zero init, which keeps ΔW and lets them learn), or zero: A uniform(±1/√d_in) seeded, B = 0.
 * Moments zero. */
export function initState(manifest: BundleManifest, from: EngineAdapter | null, seed = 0): TrainState {
  const r = trainStepEntry(manifest).rank;
  let init = from;
  if (init && init.rank > r) init = engineAdapter(r, svdTruncate({ ...init, alpha: init.rank }, r).targets);
  const rand = seededRng(seed);
  const state = new Map<string, Float32Array>();
  for (const { key, dIn, dOut } of targets(manifest)) {
    const A = new Float32Array(dIn * r);
    const B = new Float32Array(r * dOut);
    const bound = 1 / Math.sqrt(dIn);
    for (let k = 0; k < A.length; k++) A[k] = (2 * rand() - 1) * bound;
    const pair = init?.targets.get(key);
    if (pair && init!.rank > 0) {
      const ri = init!.rank;
      for (let d = 0; d < dIn; d++) for (let j = 0; j < ri; j++) A[d * r + j] = pair.A[d * ri + j]!;
      B.set(pair.B.subarray(0, ri * dOut));
    }
    state.set(`lora.${key}.A`, A);
    state.set(`lora.${key}.B`, B);
    for (const p of ['m', 'v']) {
      state.set(`${p}.${key}.A`, new Float32Array(A.length));
      state.set(`${p}.${key}.B`, new Float32Array(B.length));
    }
  }
  return state;
}

/** The factors of a state as an adapter (scale folded, rank r). */
export function stateAdapter(manifest: BundleManifest, state: TrainState): EngineAdapter {
  const r = trainStepEntry(manifest).rank;
  const map = new Map<TargetKey, LoraPair>();
  for (const { key, dIn, dOut } of targets(manifest))
    map.set(key, { dIn, dOut, A: state.get(`lora.${key}.A`)!, B: state.get(`lora.${key}.B`)! });
  return engineAdapter(r, map);
}

export class TrainStepGraph implements StepRunner {
  readonly kind = 'whole';
  private constructor(
    readonly session: Session,
    readonly manifest: BundleManifest,
    readonly bucket: Bucket,
  ) {}

  static async open(
    dir: string,
    manifest: BundleManifest,
    bucket: Bucket,
    options: SessionOptions = {},
  ): Promise<TrainStepGraph> {
    // Graph files are opened by path: their weights are external data ranges of lm.onnx beside them.
    // A step is one long native call while JS waits, so it takes every core unless told otherwise. A
    // distillation takes turns between buckets' sessions: threads left spinning by one would slow the next.
    const threads = options.intraOpNumThreads ?? availableParallelism();
    if (!bucket.file)
      throw invalid(`bundle ${manifest.id}: whole train-step bucket ${bucketKey(bucket)} names no file`);
    return new TrainStepGraph(
      await Session.open(`${dir}/${bucket.file}`, { ...options, intraOpNumThreads: threads, allowSpinning: false }),
      manifest,
      bucket,
    );
  }

  run(feeds: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    return this.session.run(feeds);
  }

  async dispose(): Promise<void> {
    await this.session.dispose();
  }
}

/** Train-step sessions kept open across distillations on one bundle. Opening one costs ~0.25 s (ORT
 * optimising thousands of nodes) plus a slow first run, and a distillation uses ~2 buckets, so reopening
 * them each time was a large share of a short distillation. Each session holds its own copy of the
 * graph's buffers, so at most `max` are kept (least recently used closed first); one in use is never
 * closed under a running distillation. */
export class TrainStepCache {
  private readonly entries = new Map<string, { graph: Promise<StepRunner>; users: number }>();
  private closed = false;
  /** The layered kind's weight buffers, shared by every bucket. */
  private readonly reader: WeightReader;

  constructor(
    private readonly dir: string,
    private readonly manifest: BundleManifest,
    private readonly max = 3,
  ) {
    this.reader = new WeightReader(dir);
  }

  /** The bucket's graph, opened on first use; call the returned release when done with it. */
  async acquire(bucket: Bucket, options: SessionOptions): Promise<{ graph: StepRunner; release: () => void }> {
    if (this.closed) {
      const graph = await openStepRunner(this.dir, this.manifest, bucket, options, this.reader);
      return { graph, release: () => void graph.dispose().catch(() => undefined) };
    }
    const key = `${bucketKey(bucket)}|${options.provider ?? ''}|${options.intraOpNumThreads ?? ''}`;
    let e = this.entries.get(key);
    if (e)
      this.entries.delete(key); // re-inserted last: Map order is the LRU order
    else e = { graph: openStepRunner(this.dir, this.manifest, bucket, options, this.reader), users: 0 };
    this.entries.set(key, e);
    e.users++;
    const entry = e;
    let graph: StepRunner;
    try {
      graph = await entry.graph;
    } catch (err) {
      entry.users--;
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw err;
    }
    this.evict();
    let released = false;
    return {
      graph,
      release: () => {
        if (released) return;
        released = true;
        entry.users--;
        if (this.closed || this.entries.get(key) !== entry) {
          if (entry.users === 0) void graph.dispose().catch(() => undefined);
        } else this.evict();
      },
    };
  }

  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.max) return;
      if (e.users > 0) continue;
      this.entries.delete(key);
      void e.graph.then((g) => g.dispose()).catch(() => undefined);
    }
  }

  /** Closes the idle sessions now and the busy ones when released. */
  async dispose(): Promise<void> {
    this.closed = true;
    const idle = [...this.entries.values()].filter((e) => e.users === 0);
    this.entries.clear();
    await Promise.all(idle.map((e) => e.graph.then((g) => g.dispose()).catch(() => undefined)));
    this.reader.release();
  }
}

/** Student rows and the teacher's top-k of one bucket as the graph's own typed arrays, refilled each step. */
export interface BatchBuffers {
  readonly batch: number;
  readonly length: number;
  readonly inputIds: BigInt64Array; // [batch, length]
  readonly attentionMask: BigInt64Array; // [batch, length]
  readonly positionIds: BigInt64Array; // [batch, length]
  readonly answerMask: Float32Array; // [batch, length]
  readonly teacherIds: BigInt64Array; // [batch, length, k]
  readonly teacherLogp: Float32Array; // [batch, length, k]
}

/** The steps of one distillation, over any of the bundle's buckets. The factors and moments stay the
 * graphs' tensors: a step's `new_*` outputs are fed to the next step as they are (the shapes do not
 * depend on the bucket), and each bucket's data feeds are allocated once and refilled in place. */
export class TrainLoop {
  private state: Record<string, Tensor> = {};
  private readonly names: readonly string[];
  private readonly step = new Float32Array(1);
  private readonly lr = new Float32Array(1);
  private readonly scalars: Record<string, Tensor>;
  private readonly data = new Map<string, { buffers: BatchBuffers; feeds: Record<string, Tensor> }>();

  constructor(
    private readonly manifest: BundleManifest,
    init: TrainState,
  ) {
    const r = trainStepEntry(manifest).rank;
    for (const { key, dIn, dOut } of targets(manifest))
      for (const p of ['lora', 'm', 'v']) {
        this.state[`${p}.${key}.A`] = float32(Float32Array.from(init.get(`${p}.${key}.A`)!), [dIn, r]);
        this.state[`${p}.${key}.B`] = float32(Float32Array.from(init.get(`${p}.${key}.B`)!), [r, dOut]);
      }
    this.names = Object.keys(this.state);
    this.scalars = { step: float32(this.step, []), lr: float32(this.lr, []) };
  }

  /** The bucket's data arrays, for the caller to fill completely before `run`. */
  buffers(bucket: Bucket): BatchBuffers {
    return this.feedsFor(bucket).buffers;
  }

  private feedsFor(bucket: Bucket): { buffers: BatchBuffers; feeds: Record<string, Tensor> } {
    const key = bucketKey(bucket);
    let d = this.data.get(key);
    if (!d) {
      const { batch: b, length: s } = bucket;
      const k = trainStepEntry(this.manifest).top_k;
      const buffers: BatchBuffers = {
        batch: b,
        length: s,
        inputIds: new BigInt64Array(b * s),
        attentionMask: new BigInt64Array(b * s),
        positionIds: new BigInt64Array(b * s),
        answerMask: new Float32Array(b * s),
        teacherIds: new BigInt64Array(b * s * k),
        teacherLogp: new Float32Array(b * s * k),
      };
      const feeds: Record<string, Tensor> = {
        input_ids: int64(buffers.inputIds, [b, s]),
        attention_mask: int64(buffers.attentionMask, [b, s]),
        position_ids: int64(buffers.positionIds, [b, s]),
        answer_mask: float32(buffers.answerMask, [b, s]),
        teacher_ids: int64(buffers.teacherIds, [b, s, k]),
        teacher_logp: float32(buffers.teacherLogp, [b, s, k]),
      };
      d = { buffers, feeds };
      this.data.set(key, d);
    }
    return d;
  }

  /** One step (`step` 1-based) of `graph` on its bucket's buffers as last filled; returns the loss
   * before the update. */
  async run(graph: StepRunner, step: number, lr: number): Promise<number> {
    this.step[0] = step;
    this.lr[0] = lr;
    const out = await graph.run({ ...this.state, ...this.scalars, ...this.feedsFor(graph.bucket).feeds });
    for (const name of this.names) this.state[name] = out[`new_${name}`]!;
    return floats(out.loss!)[0]!;
  }

  /** The current factors and moments (views of the tensors, valid until the next step). */
  get current(): TrainState {
    return new Map(this.names.map((n) => [n, floats(this.state[n]!)]));
  }
}
