// The EMA global adapter of the current bundle: ΔW_g ← (1−β)ΔW_g + βΔW_new steps (computed in the
// algebra worker), its history and rollbacks, the head for `model: "global"`, and the merges a
// continual run folds its lessons with.
import type { AdapterRecipe, AdapterSummary, EmaHistory, GlobalVersion } from '../../../common/api/adapter-schemas';
import { sharedAlgebra, type AlgebraWorker } from '../../adapters/algebra-client';
import type { MergeJob } from '../../adapters/algebra-ops';
import type { Adapter } from '../../adapters/types';
import type { EngineAdapter } from '../../engine';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { GlobalRow } from '../../store/global-versions';
import type { AdapterCache } from './adapter-cache';
import type { AdapterFactory, Made, Recipe } from './adapter-factory';
import { summaryOf, versionOf } from './adapter-summaries';
import { offThread } from './algebra-jobs';
import type { BundleRegistry } from './bundle-registry';

export const DEFAULT_BETA = 0.1;
export const DEFAULT_RANK_BUDGET = 16;

interface EmaInput {
  adapterId: string;
  beta?: number;
  rankBudget?: number;
}
type EmaWritten = { version: GlobalVersion; adapter: AdapterSummary };
/** The EMA step's adapter after rehearsal, and how it was rehearsed. */
export type Rehearsed = {
  adapter: Adapter;
  rehearsal: NonNullable<Extract<AdapterRecipe, { kind: 'ema' }>['rehearsal']>;
};

export class GlobalAdapterService {
  constructor(
    private readonly repo: AdaptersRepo,
    private readonly bundles: Pick<BundleRegistry, 'current' | 'currentOrNull'>,
    private readonly cache: Pick<AdapterCache, 'get'>,
    /** The EMA step is a recipe on it. */
    private readonly factory: Pick<AdapterFactory, 'make'>,
    private readonly algebra: Pick<AlgebraWorker, 'run'> = sharedAlgebra(),
  ) {}

  /** ΔW_g ← (1−β)ΔW_g + βΔW_new, svd back to the rank budget, appended as the next version; the
   *  algebra runs in the worker (ema.update). */
  async emaUpdateOffThread(input: EmaInput): Promise<EmaWritten> {
    const { bundleId, recipe } = this.emaRecipe(input);
    const p = await this.factory.make({ bundleId, skill: null }, recipe);
    return { version: versionOf(p.version!), adapter: p.summary };
  }

  /** The same step computed in the worker; `write` appends it, so a caller can put the append in its
   *  own transaction (continual runs store the episode with it). The head it was computed on must still
   *  be the head then (appendEma checks). A continual run may rehearse `adapter` first and write that. */
  async emaStepOffThread(input: EmaInput): Promise<{ adapter: Adapter; write(rehearsed?: Rehearsed): EmaWritten }> {
    const { recipe } = this.emaRecipe(input);
    const made = await recipe.make();
    return {
      adapter: made.adapter,
      write: (rehearsed) => {
        const r = rehearsed && {
          adapter: rehearsed.adapter,
          recipe: { ...made.recipe, rehearsal: rehearsed.rehearsal },
        };
        const out = recipe.store({ ...made, ...r });
        return { version: versionOf(out.version), adapter: summaryOf(out.adapter) };
      },
    };
  }

  /** A merge of adapters the caller keeps (copied to the worker, not moved): continual cat and linear. */
  mergeCopies(job: MergeJob): Promise<Adapter> {
    return offThread(this.algebra, 'merge', job, false);
  }

  /** The EMA step as a recipe: the algebra worker's ema job, stored by appending the next global version
   *  (the head it was computed on must still be the head: appendEma checks). */
  private emaRecipe(input: EmaInput) {
    const row = this.repo.resolve(input.adapterId);
    const bundleId = row.bundle.rowId;
    const head = this.repo.globalHead(bundleId);
    const headAdapter = head && this.repo.get(head.adapterRowId)!;
    const beta = head ? (input.beta ?? DEFAULT_BETA) : 1; // version 1 is the adapter itself
    const prevBudget = headAdapter?.recipe.kind === 'ema' ? headAdapter.recipe.rankBudget : headAdapter?.rank;
    const rankBudget = input.rankBudget ?? prevBudget ?? DEFAULT_RANK_BUDGET;
    const job = {
      global: head && this.repo.load(head.adapterRowId),
      next: this.repo.load(row.rowId),
      beta,
      rankBudget,
    };
    const json: Extract<AdapterRecipe, { kind: 'ema' }> = {
      kind: 'ema',
      beta,
      rankBudget,
      sources: [headAdapter?.key ?? null, row.key],
    };
    const lineage = head
      ? [
          { rowId: head.adapterRowId, weight: 1 - beta },
          { rowId: row.rowId, weight: beta },
        ]
      : [{ rowId: row.rowId, weight: 1 }];
    const recipe = {
      cancelled: 'EMA update cancelled',
      make: async () => ({ adapter: await offThread(this.algebra, 'ema', job), recipe: json, lineage }),
      store: (made: Made<null>) => {
        const next = { bundleId, adapter: made.adapter, recipe: made.recipe, lineage: made.lineage };
        return { ...this.repo.appendEma(bundleId, next, beta, head?.n ?? null), created: true };
      },
    } satisfies Recipe<null>;
    return { bundleId, recipe };
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
}
