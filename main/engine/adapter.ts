// Adapters as the LM graph takes them: per (layer, module) A [d_in, r] and B [r, d_out], row-major
// Float32, with the LoRA scale already folded into A — the graph computes y = x·W0 + (x·A)·B and
// takes no alpha. One batch mixes rows of any rank: each is zero-padded to the batch's largest
// rank (exact: the extra columns add (x·0)·0), and rank 0 means "no adapter".
import { parseTargetKey, scaleOf, type Adapter, type LoraPair, type TargetKey } from '../adapters/types';
import { invalid } from './errors';
import { loraName } from './graph-io';
import type { BundleManifest } from './manifest';
import { float32, type Tensor } from './ort';

/** Immutable once handed to the engine: it validates and packs an adapter once (LoraFeedCache). */
export interface EngineAdapter {
  /** Marks the engine's form, so an algebra `Adapter` (α, r) cannot be passed by mistake. */
  readonly folded: true;
  readonly rank: number;
  readonly targets: ReadonlyMap<TargetKey, LoraPair>;
  /** α/r not yet multiplied into A (absent: 1). The engine worker folds it once, into its own copy of
   *  the factors (adapter-wire.ts), so the main thread never holds a scaled copy. */
  readonly scale?: number;
}

/** An adapter whose factors already carry the scale (hypernet output, files in engine layout). */
export function engineAdapter(rank: number, targets: ReadonlyMap<TargetKey, LoraPair>, scale = 1): EngineAdapter {
  return scale === 1 ? { folded: true, rank, targets } : { folded: true, rank, targets, scale };
}

/** From the algebra's (α, r) form, sharing its arrays: the scale α/r is folded in later, once
 *  (applyScale, in the worker as an adapter arrives). */
export function foldAdapter(adapter: Adapter): EngineAdapter {
  return engineAdapter(adapter.rank, adapter.targets, scaleOf(adapter));
}

/** Every A times `scale`, in place: only for factors this thread owns (a copy received from another). */
export function scaleInPlace(targets: ReadonlyMap<TargetKey, LoraPair>, scale: number): void {
  if (scale === 1) return;
  for (const p of targets.values()) for (let i = 0; i < p.A.length; i++) p.A[i] = p.A[i]! * scale;
}

const applied = new WeakMap<EngineAdapter, EngineAdapter>();

/** The adapter with its scale in A (itself when there is none); a scaled copy is made once per adapter. */
export function applyScale(adapter: EngineAdapter): EngineAdapter {
  const s = adapter.scale ?? 1;
  if (s === 1) return adapter;
  let done = applied.get(adapter);
  if (!done) {
    const targets = new Map<TargetKey, LoraPair>();
    for (const [key, p] of adapter.targets) targets.set(key, { ...p, A: p.A.slice() });
    scaleInPlace(targets, s);
    applied.set(adapter, (done = engineAdapter(adapter.rank, targets)));
  }
  return done;
}

/** Index of the first NaN or ±Infinity, else -1. Most of what validating a new adapter costs, so a
 * float64 sum first (two accumulators, ~2× a per-value test): it is finite iff every value is,
 * since float32 values cannot add up to a float64 overflow. */
function firstNonFinite(data: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  const n = data.length;
  for (let k = 1; k < n; k += 2) {
    s0 += data[k - 1]!;
    s1 += data[k]!;
  }
  if (n % 2) s0 += data[n - 1]!;
  if (Number.isFinite(s0 + s1)) return -1;
  for (let k = 0; k < n; k++) if (!Number.isFinite(data[k]!)) return k;
  return -1;
}

/** Adapters that passed checkAdapterFits, per manifest (adapters are immutable, so once is enough). */
const fitting = new WeakMap<BundleManifest, WeakSet<EngineAdapter>>();

/** Throws an error naming the row, layer, module and dimension that do not fit the bundle.
 * Remembers success, so the engine does not re-check what a caller (or an earlier request) checked. */
export function checkAdapterFits(manifest: BundleManifest, adapter: EngineAdapter, row?: number): void {
  if (fitting.get(manifest)?.has(adapter)) return;
  checkOnce(manifest, adapter, row);
  if (!fitting.has(manifest)) fitting.set(manifest, new WeakSet());
  fitting.get(manifest)!.add(adapter);
}

function checkOnce(manifest: BundleManifest, adapter: EngineAdapter, row?: number): void {
  const who = row === undefined ? 'adapter' : `adapter of row ${row}`;
  const { rank } = adapter;
  if (adapter.folded !== true) throw invalid(`${who}: scale not folded (use foldAdapter)`);
  const scale = adapter.scale ?? 1;
  if (!Number.isFinite(scale)) throw invalid(`${who}: scale ${scale} is not finite`, { field: 'scale' });
  if (!Number.isInteger(rank) || rank < 0)
    throw invalid(`${who}: rank ${rank} is not an integer ≥ 0`, { field: 'rank' });
  const dims = new Map(manifest.lora.targets.map((t) => [t.module, t]));
  const layers = new Set(manifest.lora.layers);
  for (const [key, pair] of adapter.targets) {
    const { layer, module } = parseTargetKey(key);
    const at = `${who}, layer ${layer}, module "${module}"`;
    const details = { row, layer, module };
    if (!layers.has(layer))
      throw invalid(
        `${at}: layer ${layer} has no LoRA inputs in this bundle (layers ${[...layers].join(', ')})`,
        details,
      );
    const t = dims.get(module as never);
    if (!t) throw invalid(`${at}: not a LoRA target of this bundle (targets ${[...dims.keys()].join(', ')})`, details);
    if (pair.dIn !== t.d_in)
      throw invalid(`${at}: d_in ${pair.dIn}, the bundle has ${t.d_in}`, { ...details, dim: 'd_in' });
    if (pair.dOut !== t.d_out)
      throw invalid(`${at}: d_out ${pair.dOut}, the bundle has ${t.d_out}`, { ...details, dim: 'd_out' });
    for (const [name, data, want, shape] of [
      ['A', pair.A, t.d_in * rank, `d_in×r = ${t.d_in}×${rank}`],
      ['B', pair.B, rank * t.d_out, `r×d_out = ${rank}×${t.d_out}`],
    ] as const) {
      if (!(data instanceof Float32Array)) throw invalid(`${at}: ${name} is not a Float32Array`, details);
      if (data.length !== want)
        throw invalid(`${at}: ${name} has ${data.length} values, expected ${shape} = ${want}`, {
          ...details,
          dim: name === 'A' ? 'd_in×r' : 'r×d_out',
        });
      const k = firstNonFinite(data);
      if (k >= 0) throw invalid(`${at}: ${name}[${k}] is ${data[k]}`, details);
    }
  }
}

/** All-zero storage for absent targets, shared: ORT never writes its inputs, and neither do we. */
let zeroPool = new Float32Array(0);
function zeros(n: number): Float32Array {
  if (zeroPool.length < n) zeroPool = new Float32Array(n);
  return zeroPool.subarray(0, n);
}

type Rows = readonly (EngineAdapter | null)[];

/** Rows stacked into [b, d_in, R] / [b, R, d_out], each zero-padded from its rank to R. */
function packRows(rows: Rows, key: TargetKey, d_in: number, d_out: number, R: number): [Float32Array, Float32Array] {
  const b = rows.length;
  if (rows.every((ad) => !ad?.rank || !ad.targets.has(key))) return [zeros(b * d_in * R), zeros(b * R * d_out)];
  const A = new Float32Array(b * d_in * R);
  const B = new Float32Array(b * R * d_out);
  rows.forEach((ad, row) => {
    const pair = ad?.targets.get(key);
    if (!ad || !pair || ad.rank === 0) return;
    const r = ad.rank;
    const base = row * d_in * R;
    if (r === R) A.set(pair.A, base);
    else for (let i = 0; i < d_in; i++) A.set(pair.A.subarray(i * r, (i + 1) * r), base + i * R);
    B.set(pair.B, row * R * d_out); // rows r..R-1 of this row's block stay zero
  });
  return [A, B];
}

type Group = NonNullable<BundleManifest['lora']['groups']>[number];

/** Rows stacked into one group's [b, d_in, n·R] / [b, n·R, d_out]: member j's A in rank slots j·R…,
 * its B in the same rows at its column offset; everything else zero (exact, as packRows). */
function packGroup(rows: Rows, layer: number, g: Group, R: number): [Float32Array, Float32Array] {
  const b = rows.length;
  const Rg = g.modules.length * R;
  const keys = g.modules.map(({ module }): TargetKey => `${layer}.${module}`);
  if (rows.every((ad) => !ad?.rank || keys.every((k) => !ad.targets.has(k))))
    return [zeros(b * g.d_in * Rg), zeros(b * Rg * g.d_out)];
  const A = new Float32Array(b * g.d_in * Rg);
  const B = new Float32Array(b * Rg * g.d_out);
  rows.forEach((ad, row) => {
    if (!ad || ad.rank === 0) return;
    const r = ad.rank;
    g.modules.forEach(({ offset }, j) => {
      const pair = ad.targets.get(keys[j]!);
      if (!pair) return;
      const a0 = row * g.d_in * Rg + j * R;
      for (let i = 0; i < g.d_in; i++) A.set(pair.A.subarray(i * r, (i + 1) * r), a0 + i * Rg);
      const b0 = row * Rg * g.d_out + j * R * g.d_out + offset;
      for (let k = 0; k < r; k++) B.set(pair.B.subarray(k * pair.dOut, (k + 1) * pair.dOut), b0 + k * g.d_out);
    });
  });
  return [A, B];
}

/** The lora.* feeds for one batch: rows[i] null or rank 0 = no adapter; zero-padded to the max rank.
 * Per target, or per group where bundle.json has lora.groups (a one-member group at offset 0 is fed
 * as its target). A single row's per-target tensors wrap its adapter's own arrays (already
 * [1, d_in, r] / [1, r, d_out]): no copy. `minRank` 1 feeds zeros of rank 1 instead of empty tensors
 * (exact; the WebGPU provider crashes on zero-size inputs). */
export function loraFeeds(manifest: BundleManifest, rows: Rows, minRank = 0): Record<string, Tensor> {
  const b = rows.length;
  const R = Math.max(minRank, ...rows.map((a) => a?.rank ?? 0));
  const feeds: Record<string, Tensor> = {};
  const targets = new Map(manifest.lora.targets.map((t) => [t.module, t]));
  const groups: Group[] =
    manifest.lora.groups ??
    manifest.lora.targets.map((t) => ({ ...t, name: t.module, modules: [{ module: t.module, offset: 0 }] }));
  for (const layer of manifest.lora.layers) {
    for (const g of groups) {
      const first = g.modules[0]!;
      const t = targets.get(first.module)!;
      let A = zeros(0);
      let B = A;
      let Rg = R;
      if (g.modules.length > 1 || first.offset !== 0 || t.d_out !== g.d_out) {
        Rg = g.modules.length * R;
        if (R > 0) [A, B] = packGroup(rows, layer, g, R);
      } else if (R > 0 && b === 1) {
        const pair = rows[0]?.rank === R ? rows[0].targets.get(`${layer}.${first.module}`) : undefined;
        A = pair?.A ?? zeros(g.d_in * R);
        B = pair?.B ?? zeros(R * g.d_out);
      } else if (R > 0) [A, B] = packRows(rows, `${layer}.${first.module}`, g.d_in, g.d_out, R);
      feeds[loraName(layer, g.name, 'A')] = float32(A, [b, g.d_in, Rg]);
      feeds[loraName(layer, g.name, 'B')] = float32(B, [b, Rg, g.d_out]);
    }
  }
  return feeds;
}

/**
 * The lora.* feeds of one bundle, kept by adapter identity so that switching between known adapters
 * costs a lookup: each adapter is validated once, a single row's feeds are kept while the adapter
 * lives (they wrap its arrays, so they cost no memory of their own), the no-adapter feeds per batch
 * size, and only the last multi-row pack (that one is a copy). Hence EngineAdapters are immutable.
 */
export class LoraFeedCache {
  private readonly single = new WeakMap<EngineAdapter, Readonly<Record<string, Tensor>>>();
  private readonly none = new Map<number, Readonly<Record<string, Tensor>>>();
  private last: { rows: Rows; feeds: Readonly<Record<string, Tensor>> } | null = null;

  constructor(
    private readonly manifest: BundleManifest,
    private readonly minRank = 0,
  ) {}

  /** checkAdapterFits for each row's adapter (a lookup for those already checked). */
  check(rows: Rows): void {
    rows.forEach((ad, row) => ad && checkAdapterFits(this.manifest, ad, rows.length > 1 ? row : undefined));
  }

  /** Validated, packed feeds for this batch; the same object for the same adapters. */
  feeds(rows: Rows): Readonly<Record<string, Tensor>> {
    this.check(rows);
    // The worker receives adapters scaled; an unscaled one handed over in this thread is scaled once.
    if (rows.some((ad) => (ad?.scale ?? 1) !== 1)) rows = rows.map((ad) => ad && applyScale(ad));
    const b = rows.length;
    const make = () => loraFeeds(this.manifest, rows, this.minRank);
    if (rows.every((ad) => !ad?.rank)) return this.remember(this.none, b, make);
    if (b === 1) return this.remember(this.single, rows[0]!, make);
    const last = this.last;
    if (last && last.rows.length === b && last.rows.every((ad, i) => ad === rows[i])) return last.feeds;
    this.last = { rows: [...rows], feeds: Object.freeze(make()) };
    return this.last.feeds;
  }

  private remember<K>(
    map: {
      get(k: K): Readonly<Record<string, Tensor>> | undefined;
      set(k: K, v: Readonly<Record<string, Tensor>>): unknown;
    },
    key: K,
    make: () => Record<string, Tensor>,
  ) {
    let feeds = map.get(key);
    if (!feeds) map.set(key, (feeds = Object.freeze(make())));
    return feeds;
  }
}
