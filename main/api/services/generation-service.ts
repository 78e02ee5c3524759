// engine.generate with the adapter a request chooses (GenerateInput.adapter): a stored adapter of the
// library, a skill version compiled with the current bundle (on first use, then found in the library,
// as the OpenAI endpoint's skill models are), or the current bundle's global adapter. Every choice is
// resolved against the current bundle, so an adapter made for another bundle is refused, naming both.
import type { AdapterChoice, GenerateInput, GenerateResult, TokenDelta } from '../../../common/api/engine-schemas';
import { StudioError } from '../../../common/errors';
import type { EngineAdapter } from '../../engine';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { AdapterCache } from './adapter-cache';
import type { BundleRegistry } from './bundle-registry';
import type { CompileService } from './compile-service';
import type { EngineService } from './engine-service';

const short = (key: string) => key.slice(0, 12);

export interface ResolvedAdapter {
  /** The adapter's id (first 12 hex digits of its key). */
  id: string;
  engine: EngineAdapter;
}

export class GenerationService {
  constructor(
    private readonly engine: Pick<EngineService, 'generate'>,
    private readonly repo: Pick<AdaptersRepo, 'resolve' | 'globalHead'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    private readonly cache: Pick<AdapterCache, 'get'>,
    private readonly compiler: Pick<CompileService, 'compileAdapter'>,
  ) {}

  /** The stream handler of engine.generate. */
  async generate(
    input: GenerateInput,
    ctx: { emit(e: TokenDelta): void; signal: AbortSignal },
  ): Promise<GenerateResult> {
    const { adapter: choice, ...request } = input;
    const adapter = choice ? await this.resolve(choice, ctx.signal) : null;
    if (ctx.signal.aborted) throw new StudioError('cancelled', 'generation cancelled');
    const result = await this.engine.generate(request, ctx, adapter?.engine ?? null);
    return { ...result, adapter: adapter?.id ?? null };
  }

  /** The engine adapter a choice names, for the current bundle (loading the default on first use). */
  async resolve(choice: AdapterChoice, signal?: AbortSignal): Promise<ResolvedAdapter> {
    const current = await this.bundles.current();
    if (choice.kind === 'skill') {
      const compiled = await this.compiler.compileAdapter({ name: choice.name, version: choice.version }, { signal });
      return { id: compiled.result.adapter.id, engine: compiled.engine };
    }
    if (choice.kind === 'global') {
      const head = this.repo.globalHead(current.rowId);
      if (!head)
        throw new StudioError(
          'not_found',
          `bundle ${current.bundle.manifest.id} has no global adapter yet (ema.update makes version 1)`,
        );
      return {
        id: short(head.adapterKey),
        engine: this.cache.get(
          { rowId: head.adapterRowId, tensorsSha256: head.adapterTensorsSha256 },
          current.bundle.manifest,
        ),
      };
    }
    const row = this.repo.resolve(choice.id);
    if (row.bundle.sha256 !== current.sha256) {
      throw new StudioError(
        'invalid_input',
        `adapter ${short(row.key)} was made for bundle ${row.bundle.id} (${short(row.bundle.sha256)}), not the loaded bundle ${current.bundle.manifest.id} (${short(current.sha256)}); load that bundle first`,
        { field: 'adapter', adapterBundle: row.bundle.sha256, loadedBundle: current.sha256 },
      );
    }
    return { id: short(row.key), engine: this.cache.get(row, current.bundle.manifest) };
  }
}
