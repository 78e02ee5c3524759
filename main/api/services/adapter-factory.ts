// The one way an adapter is made (docs/design.md "The adapter factory"): resolve the skill version and the
// bundle, look the recipe's key up, run the recipe's engine work, store the adapter (one store a turn:
// turn-lane.ts) and summarise it. Instant, distilled, merged, imported and the EMA step are recipes.
import type { AdapterRecipe, AdapterSummary, SkillRef } from '../../../common/api/adapter-schemas';
import { StudioError } from '../../../common/errors';
import type { Adapter } from '../../adapters/types';
import type { BundleInfo, EngineAdapter } from '../../engine';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { GlobalRow } from '../../store/global-versions';
import type { SkillsRepo, StoredSkill } from '../../store/skills-repo';
import type { AdapterCache } from './adapter-cache';
import { summaryOf } from './adapter-summaries';
import type { BundleRegistry } from './bundle-registry';
import { storeLane } from './turn-lane';

export type ResolvedSkill = StoredSkill & { rowId: number };
/** Where an adapter is made: the bundle's row and the skill version it comes from (null: none). */
export type Site = { bundleId: number; skill: ResolvedSkill | null };
export type CurrentSite = { bundleId: number; skill: ResolvedSkill; bundle: BundleInfo };

/** What a recipe made: the algebra's form (stored), the engine's (kept decoded), the recipe JSON stored. */
export interface Made<X> {
  adapter: Adapter;
  engine?: EngineAdapter;
  recipe: AdapterRecipe;
  lineage?: { rowId: number; weight: number }[];
  name?: string;
  /** The recipe's own result (a distillation's losses, a compile's chunks). */
  extra?: X;
}
export type Stored = { adapter: StoredAdapter; created: boolean; version?: GlobalRow };

export interface Recipe<X> {
  /** The recipe JSON known before making: an adapter stored under (bundle, skill, it) is returned instead. */
  reuse?: AdapterRecipe;
  /** The cancelled error's message when the caller's signal stopped it (nothing is stored). */
  cancelled: string;
  make(): Promise<Made<X>>;
  /** Stores in place of AdaptersRepo.insert (the EMA step appends a global version). */
  store?(made: Made<X>): Stored;
}

/** `made` is null when the adapter was already stored under the recipe's key. */
export type Product<X> = Stored & { summary: AdapterSummary; made: Made<X> | null };

export class AdapterFactory {
  constructor(
    private readonly deps: {
      skills: Pick<SkillsRepo, 'get' | 'versionRowId'>;
      repo: Pick<AdaptersRepo, 'findByKey' | 'keyFor' | 'insert'>;
      bundles: Pick<BundleRegistry, 'current'>;
      cache: Pick<AdapterCache, 'get' | 'put'>;
    },
  ) {}

  /** The skill version a ref names (a resolved one as it is); not_found names it. */
  skill(ref: SkillRef | ResolvedSkill): ResolvedSkill {
    if ('rowId' in ref) return ref;
    const row = this.deps.skills.get(ref.name, ref.version);
    const rowId = row && this.deps.skills.versionRowId(ref.name, row.version.version);
    if (!row || !rowId)
      throw new StudioError('not_found', `no skill "${ref.version ? `${ref.name}@${ref.version}` : ref.name}"`, {
        skill: ref.name,
        version: ref.version ?? null,
      });
    return { ...row, rowId };
  }

  /** The skill version on the current bundle, resolved once (a site passes through). */
  async site(from: SkillRef | CurrentSite): Promise<CurrentSite> {
    if ('bundleId' in from) return from;
    const skill = this.skill(from);
    const { bundle, rowId } = await this.deps.bundles.current();
    return { bundle, bundleId: rowId, skill };
  }

  /** A stored adapter in the engine's form for this bundle (decoded once: adapter-cache.ts). */
  engineOf(row: StoredAdapter, bundle: BundleInfo): EngineAdapter {
    return this.deps.cache.get(row, bundle.manifest);
  }

  /** The recipe's adapter at `at`: the one stored under its key, else made, stored and kept decoded. */
  async make<X>(at: Site, recipe: Recipe<X>, signal?: AbortSignal): Promise<Product<X>> {
    const { repo, cache } = this.deps;
    const skillVersionId = at.skill?.rowId ?? null;
    const known = recipe.reuse && repo.findByKey(repo.keyFor(at.bundleId, skillVersionId, recipe.reuse));
    if (known) return { adapter: known, created: false, summary: summaryOf(known), made: null };
    const made = await recipe.make();
    if (signal?.aborted) throw new StudioError('cancelled', recipe.cancelled);
    // One transaction (AdaptersRepo.insert): the row and its tensors land together or not at all; one
    // store a turn, so adapters that finish together do not hold the web host (turn-lane.ts).
    const { adapter, recipe: json, lineage, name } = made;
    const stored = await storeLane.run(
      () =>
        recipe.store?.(made) ??
        repo.insert({ bundleId: at.bundleId, skillVersionId, adapter, recipe: json, lineage, name }),
    );
    if (made.engine) cache.put(stored.adapter.tensorsSha256, made.engine);
    return { ...stored, summary: summaryOf(stored.adapter), made };
  }
}
