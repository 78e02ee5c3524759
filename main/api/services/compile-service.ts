// Compiling skill versions into adapters through the current bundle's hypernetwork, cached in the
// adapter library by (skill version sha256, bundle sha256): the same input returns the same stored
// adapter (same key, same bytes). Progress per encoder chunk; a cancelled compile writes nothing.
import { storeLane } from './turn-lane';
import type { AdapterRecipe, CompileProgress, CompileResult, SkillRef } from '../../../common/api/adapter-schemas';
import { StudioError } from '../../../common/errors';
import { chunkSpans, requireHypernet, skillIds, type BundleInfo, type EngineAdapter } from '../../engine';
import { sharedEngine } from '../../engine/engine-client';
import type { CompiledSkill, CompileOptions } from '../../engine/compile';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { SkillsRepo, StoredSkill } from '../../store/skills-repo';
import type { AdapterCache } from './adapter-cache';
import { summaryOf } from './adapter-summaries';
import type { BundleRegistry } from './bundle-registry';

export interface CompiledAdapter {
  result: CompileResult;
  row: StoredAdapter;
  /** The adapter in the engine's form, ready for a generation request. */
  engine: EngineAdapter;
  bundle: BundleInfo;
}

export class CompileService {
  constructor(
    private readonly skills: SkillsRepo,
    private readonly repo: AdaptersRepo,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    /** decoded adapters for chat and compare, shared with the global adapter */
    private readonly cache: Pick<AdapterCache, 'get' | 'put'>,
    /** compileSkill's contract; by default run in the engine worker, off the main thread's loop. */
    private readonly compileSkill: (
      bundle: BundleInfo,
      text: string,
      options?: CompileOptions,
    ) => Promise<CompiledSkill> = (b, t, o) => sharedEngine().compile(b, t, o),
  ) {}

  /** The skill version a ref names; not_found names it. */
  skill(ref: SkillRef): StoredSkill & { rowId: number } {
    const row = this.skills.get(ref.name, ref.version);
    const rowId = row && this.skills.versionRowId(ref.name, row.version.version);
    if (!row || !rowId)
      throw new StudioError('not_found', `no skill "${ref.version ? `${ref.name}@${ref.version}` : ref.name}"`, {
        skill: ref.name,
        version: ref.version ?? null,
      });
    return { ...row, rowId };
  }

  /** The stream handler of adapters.compile. */
  async compile(ref: SkillRef, ctx: { emit(e: CompileProgress): void; signal: AbortSignal }): Promise<CompileResult> {
    return (await this.compileAdapter(ref, ctx)).result;
  }

  /** Compiles (or finds) the adapter of a skill version for the current bundle. */
  async compileAdapter(
    ref: SkillRef,
    ctx: { emit?(e: CompileProgress): void; signal?: AbortSignal } = {},
  ): Promise<CompiledAdapter> {
    const t0 = performance.now();
    const skill = this.skill(ref);
    const { bundle, rowId: bundleId } = await this.bundles.current();
    requireHypernet(bundle); // a clear error naming the bundle, before any lookup
    const recipe: AdapterRecipe = { kind: 'compile', hypernet: bundle.manifest.hypernet!.kind, combine: 'mean' };
    const who = { name: skill.name, version: skill.version.version };
    const skillInfo = { ...who, sha256: skill.version.sha256 };

    const known = this.repo.findByKey(this.repo.keyFor(bundleId, skill.rowId, recipe));
    if (known) {
      const tokens = skillIds(bundle, skill.content).length;
      const { token_budget, chunk_overlap } = bundle.manifest.encoder;
      return {
        row: known,
        bundle,
        engine: this.cache.get(known, bundle.manifest),
        result: {
          adapter: summaryOf(known),
          rank: known.rank,
          ms: performance.now() - t0,
          cached: true,
          skill: skillInfo,
          chunks: chunkSpans(tokens, token_budget, chunk_overlap).length,
          tokens,
        },
      };
    }

    const compiled = await this.compileSkill(bundle, skill.content, {
      signal: ctx.signal,
      onProgress: (p) => ctx.emit?.({ skill: who, chunk: p.chunk, chunks: p.chunks, tokens: p.tokens }),
    });
    if (ctx.signal?.aborted) throw new StudioError('cancelled', 'compile cancelled');
    // One transaction (AdaptersRepo.insert): the row and its tensors land together or not at all; one
    // store a turn, so compiles that finish together do not hold the web host (turn-lane.ts).
    const { adapter: row } = await storeLane.run(() =>
      this.repo.insert({ bundleId, skillVersionId: skill.rowId, adapter: compiled.adapter, recipe }),
    );
    this.cache.put(row.tensorsSha256, compiled.engine);
    return {
      row,
      bundle,
      engine: compiled.engine,
      result: {
        adapter: summaryOf(row),
        rank: row.rank,
        ms: performance.now() - t0,
        cached: false,
        skill: skillInfo,
        chunks: compiled.chunks.length,
        tokens: compiled.tokens,
      },
    };
  }

  /**
   * A text that is not a stored version (an evolve candidate) through the current bundle's
   * hypernetwork, the same compile as a version's; nothing is stored.
   */
  async compileText(
    content: string,
    ctx: { signal?: AbortSignal } = {},
  ): Promise<{ engine: EngineAdapter; bundle: BundleInfo; chunks: number }> {
    const { bundle } = await this.bundles.current();
    requireHypernet(bundle);
    const compiled = await this.compileSkill(bundle, content, { signal: ctx.signal });
    if (ctx.signal?.aborted) throw new StudioError('cancelled', 'compile cancelled');
    return { engine: compiled.engine, bundle, chunks: compiled.chunks.length };
  }

  /** Skill versions with an adapter compiled for the bundle with this row id, newest first. */
  compiledFor(bundleRowId: number): { name: string; version: number; createdAt: string }[] {
    return this.repo
      .list()
      .filter((a) => a.bundle.rowId === bundleRowId && a.recipe.kind === 'compile' && a.skill)
      .map((a) => ({ name: a.skill!.name, version: a.skill!.version, createdAt: a.createdAt }));
  }
}
