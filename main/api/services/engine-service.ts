// Holds the current bundle and runs generation on it for the UI, the CLI and the OpenAI endpoint.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { EngineInfo, GenerateInput, GenerateResult, TokenDelta } from '../../../common/api/engine-schemas';
import { StudioError } from '../../../common/errors';
import { sharedEngine, type BundleHandle } from '../../engine/engine-client';
import { gateBundleFolder } from '../../models/bundle-gate';
import { architectureOf } from '../../models/card';
import { checkPromptBytes, type BundleInfo, type EngineAdapter, type LoadOptions, type Provider } from '../../engine';

export interface EngineServiceOptions extends LoadOptions {
  /** Bundle used when none is named (resources/bundles/default). */
  defaultBundleDir: string | null;
  /** The execution provider of each load (read per load, so a changed setting applies to the next). */
  providerOf?: () => Provider;
  /** The bundle the first use loads instead of the default (the Models page's remembered choice). */
  startupDir?: () => string | null;
}

export class EngineService {
  private bundle: BundleHandle | null = null;
  private loading: Promise<BundleHandle> | null = null;

  constructor(private readonly opts: EngineServiceOptions) {}

  /** Loads a bundle and makes it current; the previous one is released once the new one works. */
  async load(dir?: string): Promise<EngineInfo> {
    const target = dir ? resolve(dir) : this.defaultDir();
    const provider = this.opts.providerOf?.() ?? this.opts.provider;
    // Every file of the folder passes the read gate before the engine opens one (docs/security.md).
    // The sessions open in the engine worker only; this thread keeps the tokenizer and template.
    const { verifyHashes, intraOpNumThreads } = this.opts;
    const next = gateBundleFolder(target).then(() =>
      sharedEngine().open(target, { verifyHashes, intraOpNumThreads, ...(provider ? { provider } : {}) }),
    );
    this.loading = next;
    try {
      const bundle = await next;
      const old = this.bundle;
      this.bundle = bundle;
      if (old && old !== bundle) await old.dispose();
      return this.info();
    } finally {
      if (this.loading === next) this.loading = null;
    }
  }

  /** The current bundle, loading the remembered one (startupDir) or the default on first use. */
  async current(): Promise<BundleHandle> {
    if (this.bundle) return this.bundle;
    if (this.loading) return this.loading;
    await this.load(this.opts.startupDir?.() ?? undefined);
    return this.bundle!;
  }

  info(): EngineInfo {
    const b = this.bundle;
    if (!b) {
      return {
        loaded: false,
        dir: null,
        id: null,
        format: null,
        architecture: null,
        loraTargets: [],
        loadMs: null,
        hasHypernet: false,
      };
    }
    return {
      loaded: true,
      dir: b.dir,
      id: b.manifest.id,
      format: b.manifest.format,
      architecture: architectureOf(b.manifest.architecture),
      loraTargets: b.manifest.lora.targets.map((t) => t.module),
      loadMs: b.loadMs,
      hasHypernet: b.manifest.hypernet !== null,
      trainingCard: b.manifest.training_card,
      provider: b.provider,
    };
  }

  /** The prompt text a request becomes (chat messages go through the bundle's template). Messages
   *  far over the context are refused before the template renders them (the row checks the rest). */
  promptOf(bundle: BundleInfo, input: GenerateInput): string {
    if (!input.messages) return input.prompt!;
    checkPromptBytes(
      bundle,
      input.messages.reduce((sum, m) => sum + Buffer.byteLength(m.content), 0),
    );
    return bundle.chat.render(input.messages);
  }

  async generate(
    input: GenerateInput,
    ctx: { emit(e: TokenDelta): void; signal: AbortSignal },
    adapter: EngineAdapter | null = null,
  ): Promise<GenerateResult> {
    const bundle = await this.current();
    const t0 = performance.now();
    let ttft = 0;
    // In the engine worker: a decode step run here would stall the event loop for its whole length.
    const it = sharedEngine().generateBatch(
      bundle,
      [
        {
          prompt: this.promptOf(bundle, input),
          adapter,
          maxNewTokens: input.maxTokens ?? 256,
          sampling: input.sampling ?? {},
          stop: input.stop ?? [],
        },
      ],
      { signal: ctx.signal },
    );
    let completion = 0;
    for (;;) {
      const step = await it.next();
      if (step.done) {
        const ms = performance.now() - t0;
        const r = step.value[0]!;
        const decodeMs = ms - ttft;
        return {
          text: r.text,
          finishReason: r.finishReason,
          promptTokens: r.promptTokens,
          completionTokens: r.tokens.length,
          ttftMs: ttft,
          ms,
          tokensPerSecond: r.tokens.length > 1 && decodeMs > 0 ? ((r.tokens.length - 1) * 1000) / decodeMs : 0,
        };
      }
      if (completion++ === 0) ttft = performance.now() - t0;
      ctx.emit({ tokenId: step.value.tokenId, text: step.value.text });
    }
  }

  private defaultDir(): string {
    const dir = this.opts.defaultBundleDir;
    if (!dir || !existsSync(dir)) {
      throw new StudioError(
        'not_found',
        `no default bundle at ${dir ?? '(none configured)'}; load one with engine.loadBundle or --bundle DIR`,
      );
    }
    return dir;
  }

  async dispose(): Promise<void> {
    await this.bundle?.dispose();
    this.bundle = null;
  }
}
