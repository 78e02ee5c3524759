// Adapters as the LM graph takes them: per (layer, module) A [d_in, r] and B [r, d_out], row-major
// Float32, with the LoRA scale already folded into A — the graph computes y = x·W0 + (x·A)·B and
// takes no alpha. One batch mixes rows of any rank: each is zero-padded to the batch's largest
// rank (exact: the extra columns add (x·0)·0), and rank 0 means "no adapter".
import { parseTargetKey, scaleOf, type Adapter, type LoraPair, type TargetKey } from '../adapters/types';
import { invalid } from './errors';
import { loraName } from './graph-io';
import type { BundleManifest } from './manifest';
import { float32, type Tensor } from './ort';

export interface EngineAdapter {
  /** Marks that α/r is inside A, so an unfolded `Adapter` cannot be passed by mistake. */
  readonly folded: true;
  readonly rank: number;
  readonly targets: ReadonlyMap<TargetKey, LoraPair>;
}

/** An adapter whose factors already carry the scale (hypernet output, files in engine layout). */
export function engineAdapter(rank: number, targets: ReadonlyMap<TargetKey, LoraPair>): EngineAdapter {
  return { folded: true, rank, targets };
}

/** From the algebra's (α, r) form: A ← (α/r)·A, B unchanged. */
export function foldAdapter(adapter: Adapter): EngineAdapter {
  const s = scaleOf(adapter);
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, p] of adapter.targets) targets.set(key, { ...p, A: s === 1 ? p.A : p.A.map((v) => v * s) });
  return engineAdapter(adapter.rank, targets);
}

/** Throws an error naming the row, layer, module and dimension that do not fit the bundle. */
export function checkAdapterFits(manifest: BundleManifest, adapter: EngineAdapter, row?: number): void {
  const who = row === undefined ? 'adapter' : `adapter of row ${row}`;
  const { rank } = adapter;
  if (adapter.folded !== true) throw invalid(`${who}: scale not folded (use foldAdapter)`);
  if (!Number.isInteger(rank) || rank < 0) throw invalid(`${who}: rank ${rank} is not an integer ≥ 0`, { field: 'rank' });
  const dims = new Map(manifest.lora.targets.map((t) => [t.module, t]));
  const layers = new Set(manifest.lora.layers);
  for (const [key, pair] of adapter.targets) {
    const { layer, module } = parseTargetKey(key);
    const at = `${who}, layer ${layer}, module "${module}"`;
    const details = { row, layer, module };
    if (!layers.has(layer)) throw invalid(`${at}: layer ${layer} has no LoRA inputs in this bundle (layers ${[...layers].join(', ')})`, details);
    const t = dims.get(module as never);
    if (!t) throw invalid(`${at}: not a LoRA target of this bundle (targets ${[...dims.keys()].join(', ')})`, details);
    if (pair.dIn !== t.d_in) throw invalid(`${at}: d_in ${pair.dIn}, the bundle has ${t.d_in}`, { ...details, dim: 'd_in' });
    if (pair.dOut !== t.d_out) throw invalid(`${at}: d_out ${pair.dOut}, the bundle has ${t.d_out}`, { ...details, dim: 'd_out' });
    for (const [name, data, want, shape] of [['A', pair.A, t.d_in * rank, `d_in×r = ${t.d_in}×${rank}`], ['B', pair.B, rank * t.d_out, `r×d_out = ${rank}×${t.d_out}`]] as const) {
      if (!(data instanceof Float32Array)) throw invalid(`${at}: ${name} is not a Float32Array`, details);
      if (data.length !== want) throw invalid(`${at}: ${name} has ${data.length} values, expected ${shape} = ${want}`, { ...details, dim: name === 'A' ? 'd_in×r' : 'r×d_out' });
      for (let k = 0; k < data.length; k++) if (!Number.isFinite(data[k]!)) throw invalid(`${at}: ${name}[${k}] is ${data[k]}`, details);
    }
  }
}

/** The lora.* feeds for one batch: rows[i] null or rank 0 = no adapter; zero-padded to the max rank. */
export function loraFeeds(manifest: BundleManifest, rows: readonly (EngineAdapter | null)[]): Record<string, Tensor> {
  const b = rows.length;
  const R = Math.max(0, ...rows.map((a) => a?.rank ?? 0));
  const feeds: Record<string, Tensor> = {};
  for (const layer of manifest.lora.layers) {
    for (const { module, d_in, d_out } of manifest.lora.targets) {
      const A = new Float32Array(b * d_in * R); // [b, d_in, R]
      const B = new Float32Array(b * R * d_out); // [b, R, d_out]
      rows.forEach((ad, row) => {
        const pair = ad?.targets.get(`${layer}.${module}`);
        if (!ad || !pair || ad.rank === 0) return;
        const r = ad.rank;
        const base = row * d_in * R;
        if (r === R) A.set(pair.A, base);
        else for (let i = 0; i < d_in; i++) for (let j = 0; j < r; j++) A[base + i * R + j] = pair.A[i * r + j]!;
        B.set(pair.B, row * R * d_out); // rows r..R-1 of this row's block stay zero
      });
      feeds[loraName(layer, module, 'A')] = float32(A, [b, d_in, R]);
      feeds[loraName(layer, module, 'B')] = float32(B, [b, R, d_out]);
    }
  }
  return feeds;
}
