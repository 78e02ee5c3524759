// Compiling skill versions into adapters through the current bundle's hypernetwork: the instant recipe on
// the adapter factory, cached in the adapter library by (skill version sha256, bundle sha256): the same
// input returns the same stored adapter (same key, same bytes). Progress per encoder chunk; a cancelled
// compile writes nothing.
import type { AdapterRecipe, CompileProgress, CompileResult, SkillRef } from '../../../common/api/adapter-schemas';
import { StudioError } from '../../../common/errors';
import { chunkSpans, requireHypernet, skillIds, type BundleInfo, type EngineAdapter } from '../../engine';
import { sharedEngine } from '../../engine/engine-client';
import type { CompiledSkill, CompileOptions } from '../../engine/compile';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { AdapterFactory, CurrentSite, ResolvedSkill } from './adapter-factory';
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
    private readonly factory: Pick<AdapterFactory, 'skill' | 'site' | 'make' | 'engineOf'>,
    private readonly repo: Pick<AdaptersRepo, 'list'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    /** compileSkill's contract; by default run in the engine worker, off the main thread's loop. */
    private readonly compileSkill: (
      bundle: BundleInfo,
      text: string,
      options?: CompileOptions,
    ) => Promise<CompiledSkill> = (b, t, o) => sharedEngine().compile(b, t, o),
  ) {}

  /** The skill version a ref names; not_found names it. */
  skill(ref: SkillRef): ResolvedSkill {
    return this.factory.skill(ref);
  }

  /** The stream handler of adapters.compile. */
  async compile(ref: SkillRef, ctx: { emit(e: CompileProgress): void; signal: AbortSignal }): Promise<CompileResult> {
    return (await this.compileAdapter(ref, ctx)).result;
  }

  /** Compiles (or finds) the adapter of a skill version (or of a site already resolved) for the current bundle. */
  async compileAdapter(
    ref: SkillRef | CurrentSite,
    ctx: { emit?(e: CompileProgress): void; signal?: AbortSignal } = {},
  ): Promise<CompiledAdapter> {
    const t0 = performance.now();
    const at = await this.factory.site(ref);
    const { bundle } = at;
    const { skill } = at;
    requireHypernet(bundle); // a clear error naming the bundle, before any lookup
    const recipe: AdapterRecipe = { kind: 'instant', hypernet: bundle.manifest.hypernet!.kind, combine: 'mean' };
    const who = { name: skill.name, version: skill.version.version };
    const p = await this.factory.make(
      at,
      {
        reuse: recipe,
        cancelled: 'compile cancelled',
        make: async () => {
          const compiled = await this.compileSkill(bundle, skill.content, {
            signal: ctx.signal,
            onProgress: (e) => ctx.emit?.({ skill: who, chunk: e.chunk, chunks: e.chunks, tokens: e.tokens }),
          });
          return { adapter: compiled.adapter, engine: compiled.engine, recipe, extra: compiled };
        },
      },
      ctx.signal,
    );
    const row = p.adapter;
    const compiled = p.made?.extra;
    const tokens = compiled?.tokens ?? skillIds(bundle, skill.content).length;
    const { token_budget, chunk_overlap } = bundle.manifest.encoder;
    return {
      row,
      bundle,
      engine: compiled?.engine ?? this.factory.engineOf(row, bundle),
      result: {
        adapter: p.summary,
        rank: row.rank,
        ms: performance.now() - t0,
        cached: !compiled,
        skill: { ...who, sha256: skill.version.sha256 },
        chunks: compiled ? compiled.chunks.length : chunkSpans(tokens, token_budget, chunk_overlap).length,
        tokens,
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
      .filter((a) => a.bundle.rowId === bundleRowId && a.recipe.kind === 'instant' && a.skill)
      .map((a) => ({ name: a.skill!.name, version: a.skill!.version, createdAt: a.createdAt }));
  }
}
