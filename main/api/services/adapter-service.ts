// The adapter library: import/export PEFT folders, merges, similarity, statistics, and the EMA
// global adapter, over AdaptersRepo, the shared bundle registry and the shared adapter cache.
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
  type EmaHistory,
  type GlobalVersion,
  type MergeInput,
  type MergePreview,
  type SimilarityInput,
  type SimilarityResult,
} from '../../../common/api/adapter-schemas';
import { StudioError } from '../../../common/errors';
import { emaStep } from '../../adapters/ema';
import { cat, linearBaseline } from '../../adapters/merge';
import { compareToExact, rankSlotNorms, spectraAgainstExact } from '../../adapters/merge-stats';
import { PEFT_CONFIG, PEFT_WEIGHTS, readPeftDir, SIDECAR, writePeftDir } from '../../adapters/peft-dir';
import { cosineSimilarity, frobeniusNorms, linearBaselineError, singularValues } from '../../adapters/stats';
import { svdMerge } from '../../adapters/svd';
import { parseTargetKey, type Adapter } from '../../adapters/types';
import { AdapterValidationError } from '../../adapters/validate';
import { checkAdapterFits, foldAdapter, type EngineAdapter } from '../../engine';
import { encodeAdapter, sha256Hex } from '../../store/adapter-tensors';
import type { AdaptersRepo, GlobalRow, StoredAdapter } from '../../store/adapters-repo';
import type { AdapterCache } from './adapter-cache';
import type { BundleRegistry } from './bundle-registry';

export const DEFAULT_BETA = 0.1;
export const DEFAULT_RANK_BUDGET = 16;
const DEFAULT_SINGULAR_VALUES = 8;
const VISUAL_SINGULAR_VALUES = 32;

const shortId = (key: string) => key.slice(0, 12);

type Summary = ReturnType<typeof frobeniusNorms>;
const plainSummary = (x: Summary) => ({
  overall: x.overall,
  perTarget: x.perTarget.map(({ layer, module, value }) => ({ layer, module, value })),
});
/** JSON has no ∞: an infinite ratio (x/0) travels as null. */
const nullableSummary = (x: Summary) => {
  const finite = (v: number) => (Number.isFinite(v) ? v : null);
  return {
    overall: finite(x.overall),
    perTarget: x.perTarget.map(({ layer, module, value }) => ({ layer, module, value: finite(value) })),
  };
};

/** Bad adapters and bad ranks are the caller's input, not studio bugs. */
function algebra<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof AdapterValidationError || err instanceof RangeError)
      throw new StudioError('invalid_input', err.message, { cause: err.message });
    throw err;
  }
}

export function summaryOf(a: StoredAdapter): AdapterSummary {
  return {
    id: shortId(a.key),
    key: a.key,
    rank: a.rank,
    alpha: a.alpha,
    recipe: a.recipe,
    lineage: a.lineage.map((l) => ({ id: shortId(l.key), weight: l.weight })),
    bundle: { id: a.bundle.id, sha256: a.bundle.sha256 },
    skill: a.skill,
    bytes: a.bytes,
    tensorsSha256: a.tensorsSha256,
    createdAt: a.createdAt,
  };
}

const versionOf = (g: GlobalRow): GlobalVersion => ({
  version: g.n,
  adapter: shortId(g.adapterKey),
  kind: g.kind,
  beta: g.beta,
  rank: g.rank,
  parentVersion: g.parentN,
  restoresVersion: g.restoresN,
  createdAt: g.createdAt,
});

export class AdapterService {
  private warnedCompare = false;

  constructor(
    private readonly repo: AdaptersRepo,
    private readonly bundles: Pick<BundleRegistry, 'current' | 'currentOrNull'>,
    private readonly cache: Pick<AdapterCache, 'get'>,
    private readonly warn: (message: string) => void = (m) => console.warn(`[pskills] ${m}`),
  ) {}

  list(): AdapterSummary[] {
    return this.repo.list().map(summaryOf);
  }

  get(input: { id: string; singularValues?: number }): AdapterDetail {
    const row = this.repo.resolve(input.id);
    const adapter = this.repo.load(row.rowId);
    const norms = frobeniusNorms(adapter);
    const count = Math.min(input.singularValues ?? DEFAULT_SINGULAR_VALUES, adapter.rank);
    return {
      ...summaryOf(row),
      shapes: [...adapter.targets].map(([key, p]) => ({ ...parseTargetKey(key), dIn: p.dIn, dOut: p.dOut })),
      stats: {
        norms: {
          overall: norms.overall,
          perTarget: norms.perTarget.map(({ layer, module, value }) => ({ layer, module, value })),
        },
        singularValues: singularValues(adapter, count).map(({ layer, module, value }) => ({
          layer,
          module,
          values: value,
        })),
      },
    };
  }

  /** A PEFT folder, checked against the current bundle's targets and dims before it is stored. */
  async import(input: { dir: string }): Promise<AdapterWritten> {
    const dir = resolve(input.dir);
    if (!existsSync(dir)) throw new StudioError('not_found', `${dir}: no such folder`);
    const { adapter } = await readPeftDir(dir).catch((err: Error) => {
      throw new StudioError('invalid_input', err.message);
    });
    const { bundle, rowId } = await this.bundles.current();
    checkAdapterFits(bundle.manifest, foldAdapter(adapter));
    const recipe: AdapterRecipe = { kind: 'import', tensorsSha256: sha256Hex(encodeAdapter(adapter)) };
    const { adapter: row, created } = this.repo.insert({ bundleId: rowId, adapter, recipe });
    return { adapter: summaryOf(row), created };
  }

  /** PEFT folder + pskills.json (skill hash, bundle hash, recipe, lineage by key). */
  async export(input: { id: string; dir: string }): Promise<{ dir: string; files: string[] }> {
    const row = this.repo.resolve(input.id);
    const dir = resolve(input.dir);
    const sidecar = {
      format: 'pskills.sidecar/1',
      adapter: row.key,
      skill: row.skill,
      skillSha256: row.skill?.sha256 ?? null,
      bundle: { id: row.bundle.id, sha256: row.bundle.sha256 },
      recipe: row.recipe,
      lineage: row.lineage.map((l) => ({ key: l.key, weight: l.weight })),
    };
    await writePeftDir(dir, this.repo.load(row.rowId), sidecar, row.bundle.id).catch((err: Error) => {
      throw new StudioError('invalid_input', err.message);
    });
    return { dir, files: [PEFT_CONFIG, PEFT_WEIGHTS, SIDECAR] };
  }

  merge(input: MergeInput): AdapterWritten {
    const plan = this.mergePlan(input);
    const known = this.repo.findByKey(this.repo.keyFor(plan.bundleId, null, plan.recipe));
    if (known) return { adapter: summaryOf(known), created: false };
    const merged = this.computeMerge(input, plan.adapters, plan.weights);
    const lineage = plan.rows.map((r, i) => ({ rowId: r.rowId, weight: plan.weights[i]! }));
    const { adapter, created } = this.repo.insert({
      bundleId: plan.bundleId,
      adapter: merged,
      recipe: plan.recipe,
      lineage,
    });
    return { adapter: summaryOf(adapter), created };
  }

  /** adapters.mergePreview: the same computation as merge, measured against the exact sum, not stored. */
  mergePreview(input: MergeInput): MergePreview {
    const plan = this.mergePlan(input);
    const known = this.repo.findByKey(this.repo.keyFor(plan.bundleId, null, plan.recipe));
    const merged = this.computeMerge(input, plan.adapters, plan.weights);
    const cmp = algebra(() => compareToExact(merged, plan.adapters, plan.weights));
    const norms = frobeniusNorms(merged);
    return {
      method: input.method,
      rank: merged.rank,
      weights: plan.weights,
      sources: plan.rows.map((r, i) => ({
        id: shortId(r.key),
        rank: r.rank,
        norm: frobeniusNorms(plan.adapters[i]!).overall,
      })),
      norms: plainSummary(norms),
      exactNorms: plainSummary(cmp.exact),
      error: nullableSummary(cmp.error),
      energyKept: input.method === 'svd' ? nullableSummary(cmp.energy) : null,
      existing: known ? shortId(known.key) : null,
    };
  }

  /** adapters.visualize: rank-slot norms, a cat merge's blocks, spectra before/after an svd truncation. */
  visualize(input: { id: string; singularValues?: number }): AdapterVisual {
    const row = this.repo.resolve(input.id);
    const adapter = this.repo.load(row.rowId);
    const count = input.singularValues ?? VISUAL_SINGULAR_VALUES;
    const r = row.recipe;
    let blocks: AdapterVisual['blocks'] = [];
    if (r.kind === 'merge' && r.method === 'cat') {
      let offset = 0;
      blocks = r.sources.map((key, i) => {
        const rank = this.repo.resolve(key).rank;
        const block = { source: shortId(key), weight: r.weights[i]!, offset, rank };
        offset += rank;
        return block;
      });
    }
    const truncated = this.truncationOf(row);
    let spectra: AdapterVisual['spectra'];
    let truncation: AdapterVisual['truncation'] = null;
    if (truncated) {
      const sources = truncated.keys.map((k) => this.repo.load(this.repo.resolve(k).rowId));
      spectra = algebra(() => spectraAgainstExact(adapter, sources, truncated.weights, count)).map((t) => ({
        layer: t.layer,
        module: t.module,
        before: t.value.before,
        after: t.value.after,
      }));
      const cmp = algebra(() => compareToExact(adapter, sources, truncated.weights));
      truncation = { rank: adapter.rank, energyKept: nullableSummary(cmp.energy) };
    } else {
      spectra = singularValues(adapter, Math.min(count, adapter.rank)).map((t) => ({
        layer: t.layer,
        module: t.module,
        before: t.value,
        after: null,
      }));
    }
    return { id: shortId(row.key), rankSlots: rankSlotNorms(adapter), blocks, spectra, truncation };
  }

  /** adapters.similarity: pairwise cosine of the ΔWs, and the linear baseline's error against cat. */
  similarity(input: SimilarityInput): SimilarityResult {
    const rows = this.sameBundle(input.ids);
    const adapters = rows.map((r) => this.repo.load(r.rowId));
    const n = adapters.length;
    const pairs = adapters.map((x, i) =>
      adapters.map((y, j) => (j < i ? null : algebra(() => cosineSimilarity(x, y)))),
    );
    const at = (i: number, j: number) => pairs[Math.min(i, j)]![Math.max(i, j)]!;
    const matrix = (pick: (s: ReturnType<typeof cosineSimilarity>) => number) =>
      Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => pick(at(i, j))));
    const finite = (v: number) => (Number.isFinite(v) ? v : null);
    const ranks = new Set(adapters.map((a) => a.rank));
    let linearVsCat: SimilarityResult['linearVsCat'];
    if (ranks.size > 1)
      linearVsCat = {
        unavailable: `the linear baseline needs equal ranks; these have ${rows.map((r) => r.rank).join(', ')}`,
      };
    else {
      const e = algebra(() => linearBaselineError(adapters, input.weights ?? rows.map(() => 1)));
      linearVsCat = {
        overall: finite(e.overall),
        perTarget: e.perTarget.map(({ layer, module, value }) => ({ layer, module, value: finite(value) })),
      };
    }
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
  compareDeprecated(input: SimilarityInput): DeprecatedCompareResult {
    if (!this.warnedCompare) {
      this.warnedCompare = true;
      this.warn(SIMILARITY_DEPRECATION);
    }
    return { ...this.similarity(input), deprecated: SIMILARITY_DEPRECATION };
  }

  delete(input: { id: string }): { deleted: string } {
    const row = this.repo.resolve(input.id);
    this.repo.delete(row.rowId);
    return { deleted: row.key };
  }

  /** ΔW_g ← (1−β)ΔW_g + βΔW_new, svd back to the rank budget, appended as the next version. */
  emaUpdate(input: { adapterId: string; beta?: number; rankBudget?: number }): {
    version: GlobalVersion;
    adapter: AdapterSummary;
  } {
    const row = this.repo.resolve(input.adapterId);
    const bundleId = row.bundle.rowId;
    const head = this.repo.globalHead(bundleId);
    const headAdapter = head && this.repo.get(head.adapterRowId)!;
    const beta = head ? (input.beta ?? DEFAULT_BETA) : 1; // version 1 is the adapter itself
    const prevBudget = headAdapter?.recipe.kind === 'ema' ? headAdapter.recipe.rankBudget : headAdapter?.rank;
    const rankBudget = input.rankBudget ?? prevBudget ?? DEFAULT_RANK_BUDGET;
    const next = algebra(() =>
      emaStep(head && this.repo.load(head.adapterRowId), this.repo.load(row.rowId), beta, rankBudget),
    );
    const recipe: AdapterRecipe = { kind: 'ema', beta, rankBudget, sources: [headAdapter?.key ?? null, row.key] };
    const lineage = head
      ? [
          { rowId: head.adapterRowId, weight: 1 - beta },
          { rowId: row.rowId, weight: beta },
        ]
      : [{ rowId: row.rowId, weight: 1 }];
    const out = this.repo.appendEma(bundleId, { bundleId, adapter: next, recipe, lineage }, beta, head?.n ?? null);
    return { version: versionOf(out.version), adapter: summaryOf(out.adapter) };
  }

  async emaHistory(): Promise<EmaHistory> {
    const { rowId, bundle, sha256 } = await this.bundles.current();
    return { bundle: { id: bundle.manifest.id, sha256 }, versions: this.repo.globalHistory(rowId).map(versionOf) };
  }

  async emaRollback(input: { version: number }): Promise<GlobalVersion> {
    const { rowId } = await this.bundles.current();
    return versionOf(this.repo.rollback(rowId, input.version));
  }

  /** The current bundle's global version, or null when it has none or no bundle can be loaded. */
  async globalHead(): Promise<GlobalRow | null> {
    const current = await this.bundles.currentOrNull();
    return current && this.repo.globalHead(current.rowId);
  }

  /** The global adapter in the engine's form, for `model: "global"`; decoded once (adapter cache). */
  async globalAdapter(): Promise<EngineAdapter | null> {
    const current = await this.bundles.currentOrNull();
    const head = current && this.repo.globalHead(current.rowId);
    if (!current || !head) return null;
    return this.cache.get(
      { rowId: head.adapterRowId, tensorsSha256: head.adapterTensorsSha256 },
      current.bundle.manifest,
    );
  }

  private mergePlan(input: MergeInput) {
    const rows = this.sameBundle(input.ids);
    const weights = input.weights ?? rows.map(() => 1);
    const recipe: AdapterRecipe = {
      kind: 'merge',
      method: input.method,
      weights,
      rank: input.rank ?? null,
      sources: rows.map((r) => r.key),
    };
    return {
      rows,
      weights,
      recipe,
      bundleId: rows[0]!.bundle.rowId,
      adapters: rows.map((r) => this.repo.load(r.rowId)),
    };
  }

  private computeMerge(input: MergeInput, adapters: Adapter[], weights: number[]): Adapter {
    return algebra(() => {
      if (input.method === 'cat') return cat(adapters, weights);
      if (input.method === 'linear') return linearBaseline(adapters, weights);
      return svdMerge(adapters, weights, input.rank!);
    });
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
    const rows = ids.map((id) => this.repo.resolve(id));
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
