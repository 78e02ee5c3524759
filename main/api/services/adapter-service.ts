// The adapter library: import/export PEFT folders, merges, similarity and statistics, over
// AdaptersRepo and the shared bundle registry (the EMA global adapter: global-adapter-service.ts).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  SIMILARITY_DEPRECATION,
  type AdapterDetail,
  type AdapterRecipe,
  type AdapterSummary,
  type AdapterVisual,
  type AdapterWritten,
  type DeprecatedCompareResult,
  type ExportAdapterInput,
  type MergeInput,
  type MergePreview,
  type MergeProgress,
  type RenameAdapterInput,
  type SimilarityInput,
  type SimilarityResult,
} from '../../../common/api/adapter-schemas';
import { mergeName } from '../../../common/adapters/name';
import { DEFAULT_SETTINGS } from '../../../common/api/trajectory-schemas';
import { StudioError } from '../../../common/errors';
import { sharedAlgebra, type AlgebraWorker } from '../../adapters/algebra-client';
import type { MergeJob } from '../../adapters/algebra-ops';
import { PEFT_CONFIG, PEFT_WEIGHTS, readPeftDir, SIDECAR, writePeftDir } from '../../adapters/peft-dir';
import { capMerge, rankCap } from '../../adapters/rank-cap';
import type { StatSummary } from '../../adapters/stats';
import { parseTargetKey, type Adapter } from '../../adapters/types';
import { checkAdapterFits, foldAdapter, type BundleManifest, type EngineAdapter } from '../../engine';
import { encodeAdapter, sha256Hex } from '../../store/adapter-tensors';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { AdapterFactory } from './adapter-factory';
import { nullableSummary, plainSummary, shortId, summaryOf } from './adapter-summaries';
import { exportGguf, exportOllama, importGguf } from './adapter-gguf';
import { offThread } from './algebra-jobs';
import type { BundleRegistry } from './bundle-registry';
import type { DistillService } from './distill-service';

/** Where adapters.merge reports its progress, and the signal that cancels it. */
export interface MergeContext {
  emit(event: MergeProgress): void;
  signal: AbortSignal;
}

const DEFAULT_SINGULAR_VALUES = 8;
const VISUAL_SINGULAR_VALUES = 32;

/** What the adapter library needs, by name. */
export interface AdapterDeps {
  repo: AdaptersRepo;
  bundles: Pick<BundleRegistry, 'current'>;
  /** Merges and imports are recipes on it. */
  factory: Pick<AdapterFactory, 'make'>;
  /** adapters.merge's `rehearse`; absent: refused. */
  rehearser?: Pick<DistillService, 'rehearsalParts' | 'rehearse'>;
  /** The maxMergeRank setting, read at each merge. */
  maxMergeRank?: () => number;
  warn?: (message: string) => void;
  /** The adapter algebra runs here, off the main thread; inputs loaded for a job are transferred. */
  algebra?: Pick<AlgebraWorker, 'run'>;
}

export class AdapterService {
  private warnedCompare = false;
  private readonly deps: Required<Omit<AdapterDeps, 'rehearser'>> & AdapterDeps;

  constructor(deps: AdapterDeps) {
    const warn = (m: string) => console.warn(`[pskills] ${m}`);
    this.deps = { warn, algebra: sharedAlgebra(), maxMergeRank: () => DEFAULT_SETTINGS.maxMergeRank, ...deps };
  }

  list(): AdapterSummary[] {
    return this.deps.repo.list().map(summaryOf);
  }

  async get(input: { id: string; singularValues?: number }): Promise<AdapterDetail> {
    const row = this.deps.repo.resolve(input.id);
    const adapter = this.deps.repo.load(row.rowId);
    const count = Math.min(input.singularValues ?? DEFAULT_SINGULAR_VALUES, adapter.rank);
    const shapes = [...adapter.targets].map(([key, p]) => ({ ...parseTargetKey(key), dIn: p.dIn, dOut: p.dOut }));
    const { norms, singularValues } = await offThread(this.deps.algebra, 'details', { adapter, count });
    return {
      ...summaryOf(row),
      shapes,
      stats: {
        norms: plainSummary(norms),
        singularValues: singularValues.map(({ layer, module, value }) => ({
          layer,
          module,
          values: value,
        })),
      },
    };
  }

  /** A PEFT folder or a llama.cpp LoRA .gguf, checked against the current bundle's targets and dims
   * before it is stored. */
  async import(input: { dir: string }): Promise<AdapterWritten> {
    const dir = resolve(input.dir);
    const gguf = dir.endsWith('.gguf');
    if (!existsSync(dir)) throw new StudioError('not_found', `${dir}: no such ${gguf ? 'file' : 'folder'}`);
    if (gguf) {
      const current = await this.deps.bundles.current();
      return this.store(await importGguf(dir, current.bundle.manifest), current);
    }
    const { adapter } = await readPeftDir(dir).catch((err: Error) => {
      throw err instanceof StudioError ? err : new StudioError('invalid_input', err.message);
    });
    return this.store(adapter, await this.deps.bundles.current());
  }

  private async store(
    adapter: Adapter,
    { bundle, rowId }: { bundle: { manifest: BundleManifest }; rowId: number },
  ): Promise<AdapterWritten> {
    checkAdapterFits(bundle.manifest, foldAdapter(adapter));
    const recipe: AdapterRecipe = { kind: 'import', tensorsSha256: sha256Hex(encodeAdapter(adapter)) };
    const p = await this.deps.factory.make(
      { bundleId: rowId, skill: null },
      { cancelled: 'import cancelled', make: async () => ({ adapter, recipe }) },
    );
    return { adapter: p.summary, created: p.created };
  }

  /** PEFT folder + pskills.json (skill hash, bundle hash, recipe, lineage by key); or a llama.cpp LoRA
   * GGUF, or an Ollama folder (adapter-gguf.ts), for a bundle whose base has a GGUF. */
  async export(input: ExportAdapterInput): Promise<{ dir: string; files: string[] }> {
    const row = this.deps.repo.resolve(input.id);
    const dir = resolve(input.dir);
    const format = input.format ?? 'peft';
    const sidecar = {
      format: 'pskills.sidecar/1',
      adapter: row.key,
      skill: row.skill,
      skillSha256: row.skill?.sha256 ?? null,
      bundle: { id: row.bundle.id, sha256: row.bundle.sha256 },
      recipe: row.recipe,
      lineage: row.lineage.map((l) => ({ key: l.key, weight: l.weight })),
    };
    if (format !== 'peft') {
      const rec = this.deps.repo.bundleRecord(row.bundle.rowId);
      if (!rec) throw new StudioError('not_found', `bundle ${row.bundle.id} of adapter ${row.key}: not in the store`);
      const manifest = rec.manifest as BundleManifest;
      const adapter = this.deps.repo.load(row.rowId);
      const opts = { ...input, dir };
      return format === 'gguf'
        ? exportGguf(row, adapter, manifest, opts)
        : exportOllama(row, adapter, { manifest, dir: rec.path }, opts, sidecar);
    }
    await writePeftDir(dir, this.deps.repo.load(row.rowId), sidecar, row.bundle.id, input.overwrite ?? false).catch(
      (err: Error) => {
        throw err instanceof StudioError ? err : new StudioError('invalid_input', err.message);
      },
    );
    return { dir, files: [PEFT_CONFIG, PEFT_WEIGHTS, SIDECAR] };
  }

  /** The merge, then with `rehearse` that many train steps (progress per step); the caller's signal stops
   *  it between steps, and a cancelled merge stores nothing. */
  async merge(
    input: MergeInput,
    ctx: MergeContext = { emit: () => {}, signal: new AbortController().signal },
  ): Promise<AdapterWritten> {
    const plan = this.mergePlan(input);
    const message = 'merge cancelled; nothing was stored';
    const cancelled = () => new StudioError('cancelled', message);
    const make = async () => {
      // Rehearsal's parts are checked before the merge runs, so a source without a skill costs nothing.
      const rehearsal = input.rehearse === undefined ? null : this.rehearsal(plan.rows, input.rehearse);
      let merged = await offThread(this.deps.algebra, 'merge', this.mergeJob(plan));
      if (ctx.signal.aborted) throw cancelled();
      ctx.emit({ phase: 'merge', step: 0, steps: input.rehearse ?? 0, loss: null, secondsLeft: null });
      if (rehearsal) {
        // The engine's own cancel speaks of a distillation: the caller asked for a merge.
        const { adapter: a } = await rehearsal.run(foldAdapter(merged), input.seed ?? 0, ctx).catch((err: unknown) => {
          throw ctx.signal.aborted ? cancelled() : err;
        });
        merged = { rank: a.rank, alpha: a.rank, targets: a.targets };
      }
      const lineage = plan.rows.map((r, i) => ({ rowId: r.rowId, weight: plan.weights[i]! }));
      const name = input.name ?? mergeName(plan.rows, plan.method);
      return { adapter: merged, recipe: plan.recipe, lineage, name };
    };
    const at = { bundleId: plan.bundleId, skill: null };
    const p = await this.deps.factory.make(at, { reuse: plan.recipe, cancelled: message, make }, ctx.signal);
    return { adapter: p.summary, created: p.created };
  }

  /** adapters.rename: a name a person reads in every list; null goes back to the made-up one. */
  rename(input: RenameAdapterInput): AdapterSummary {
    const row = this.deps.repo.resolve(input.id);
    return summaryOf(this.deps.repo.rename(row.rowId, input.name));
  }

  /** adapters.mergePreview: the same computation as merge, measured against the exact sum, not stored. */
  async mergePreview(input: MergeInput): Promise<MergePreview> {
    const plan = this.mergePlan(input);
    const known = this.deps.repo.findByKey(this.deps.repo.keyFor(plan.bundleId, null, plan.recipe));
    const { rank, norms, sourceNorms, cmp } = await offThread(this.deps.algebra, 'mergePreview', this.mergeJob(plan));
    return {
      method: plan.method,
      rank,
      weights: plan.weights,
      sources: plan.rows.map((r, i) => ({ id: shortId(r.key), rank: r.rank, norm: sourceNorms[i]! })),
      norms: plainSummary(norms),
      exactNorms: plainSummary(cmp.exact),
      error: nullableSummary(cmp.error),
      energyKept: plan.method === 'svd' ? nullableSummary(cmp.energy) : null,
      existing: known ? shortId(known.key) : null,
      rehearse: input.rehearse ?? null,
    };
  }

  /** adapters.visualize: rank-slot norms, a cat merge's blocks, spectra before/after an svd truncation. */
  async visualize(input: { id: string; singularValues?: number }): Promise<AdapterVisual> {
    const row = this.deps.repo.resolve(input.id);
    const adapter = this.deps.repo.load(row.rowId);
    const count = input.singularValues ?? VISUAL_SINGULAR_VALUES;
    const r = row.recipe;
    let blocks: AdapterVisual['blocks'] = [];
    if (r.kind === 'merge' && r.method === 'cat') {
      let offset = 0;
      blocks = r.sources.map((key, i) => {
        const rank = this.deps.repo.resolve(key).rank;
        const block = { source: shortId(key), weight: r.weights[i]!, offset, rank };
        offset += rank;
        return block;
      });
    }
    const cut = this.truncationOf(row);
    const truncated = cut && {
      sources: cut.keys.map((k) => this.deps.repo.load(this.deps.repo.resolve(k).rowId)),
      weights: cut.weights,
    };
    const rank = adapter.rank;
    const v = await offThread(this.deps.algebra, 'visualize', { adapter, count, truncated });
    const spectra: AdapterVisual['spectra'] = v.spectra
      ? v.spectra.map((t) => ({ layer: t.layer, module: t.module, before: t.value.before, after: t.value.after }))
      : v.singularValues!.map((t) => ({ layer: t.layer, module: t.module, before: t.value, after: null }));
    const truncation: AdapterVisual['truncation'] = v.energy ? { rank, energyKept: nullableSummary(v.energy) } : null;
    return { id: shortId(row.key), rankSlots: v.rankSlots, blocks, spectra, truncation };
  }

  /** adapters.similarity: pairwise cosine of the ΔWs, and the linear baseline's error against cat. */
  async similarity(input: SimilarityInput): Promise<SimilarityResult> {
    const rows = this.sameBundle(input.ids);
    const adapters = rows.map((r) => this.deps.repo.load(r.rowId));
    const n = adapters.length;
    const equalRanks = new Set(adapters.map((a) => a.rank)).size === 1;
    const linearWeights = equalRanks ? (input.weights ?? rows.map(() => 1)) : null;
    const { pairs, linearError } = await offThread(this.deps.algebra, 'similarity', { adapters, linearWeights });
    const at = (i: number, j: number) => pairs[Math.min(i, j)]![Math.max(i, j)]!;
    const matrix = (pick: (s: StatSummary) => number) =>
      Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => pick(at(i, j))));
    const linearVsCat: SimilarityResult['linearVsCat'] = linearError
      ? nullableSummary(linearError)
      : { unavailable: `the linear baseline needs equal ranks; these have ${rows.map((r) => r.rank).join(', ')}` };
    return {
      ids: rows.map((r) => shortId(r.key)),
      cosine: matrix((s) => s.overall),
      perTarget: at(0, 0).perTarget.map(({ layer, module }, t) => ({
        layer,
        module,
        cosine: matrix((s) => s.perTarget[t]!.value),
      })),
      linearVsCat,
    };
  }

  /** adapters.compare, the deprecated name of adapters.similarity (kept one release): the same
   * result plus the deprecation note, which is also logged once per process. */
  async compareDeprecated(input: SimilarityInput): Promise<DeprecatedCompareResult> {
    if (!this.warnedCompare) {
      this.warnedCompare = true;
      this.deps.warn(SIMILARITY_DEPRECATION);
    }
    return { ...(await this.similarity(input)), deprecated: SIMILARITY_DEPRECATION };
  }

  delete(input: { id: string }): { deleted: string } {
    const row = this.deps.repo.resolve(input.id);
    this.deps.repo.delete(row.rowId);
    return { deleted: row.key };
  }

  private mergePlan(input: MergeInput) {
    const rows = this.sameBundle(input.ids);
    const weights = input.weights ?? rows.map(() => 1);
    // The rank cap from the rows' ranks and one source's shapes, before the others are loaded.
    const first = this.deps.repo.load(rows[0]!.rowId);
    const capped = capMerge(
      input.method,
      rows.map((r) => r.rank),
      input.rank,
      rankCap(this.deps.maxMergeRank(), first.targets),
      input.overRank,
    );
    const recipe: AdapterRecipe = {
      kind: 'merge',
      method: capped.method,
      weights,
      rank: capped.rank ?? null,
      sources: rows.map((r) => r.key),
      ...(input.rehearse === undefined ? {} : { rehearse: { steps: input.rehearse, seed: input.seed ?? 0 } }),
    };
    return {
      rows,
      weights,
      recipe,
      method: capped.method,
      rank: capped.rank,
      bundleId: rows[0]!.bundle.rowId,
      adapters: rows.map((r, i) => (i === 0 ? first : this.deps.repo.load(r.rowId))),
    };
  }

  private rehearsal(rows: StoredAdapter[], steps: number) {
    const distiller = this.deps.rehearser;
    if (!distiller) throw new StudioError('invalid_input', 'rehearse: this studio cannot distil');
    const parts = distiller.rehearsalParts(rows);
    return {
      run: (init: EngineAdapter, seed: number, ctx: MergeContext) =>
        distiller.rehearse({ parts, init, steps, seed }, ctx.signal, (p) => ctx.emit({ ...p })),
    };
  }

  private mergeJob(plan: {
    adapters: Adapter[];
    weights: number[];
    method: MergeInput['method'];
    rank: number | undefined;
  }): MergeJob {
    return { method: plan.method, adapters: plan.adapters, weights: plan.weights, rank: plan.rank };
  }

  /** The sources and weights an svd merge or an EMA version truncated, when it is one. */
  private truncationOf(row: StoredAdapter): { keys: string[]; weights: number[] } | null {
    const r = row.recipe;
    if (r.kind === 'merge' && r.method === 'svd') return { keys: r.sources, weights: r.weights };
    if (r.kind !== 'ema') return null;
    const [prev, next] = r.sources;
    return prev === null ? { keys: [next], weights: [1] } : { keys: [prev, next], weights: [1 - r.beta, r.beta] };
  }

  private sameBundle(ids: string[]): StoredAdapter[] {
    const rows = ids.map((id) => this.deps.repo.resolve(id));
    const other = rows.find((r) => r.bundle.rowId !== rows[0]!.bundle.rowId);
    if (other) {
      throw new StudioError(
        'invalid_input',
        `adapter ${shortId(other.key)} belongs to bundle ${other.bundle.id} (${other.bundle.sha256.slice(0, 12)}), adapter ${shortId(rows[0]!.key)} to ${rows[0]!.bundle.id} (${rows[0]!.bundle.sha256.slice(0, 12)})`,
      );
    }
    return rows;
  }
}
