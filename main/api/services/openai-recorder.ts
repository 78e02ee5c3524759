// Keeps a chat completion of the OpenAI-compatible endpoint as a trajectory (source `openai`), only
// when the request says `"store": true` (OpenAI's own parameter) and the studio keeps trajectories.
// The model name says what ran: `base` (no adapter), `global` (the global adapter's newest version),
// `base:<skill>@<n>` (its distilled adapter where it has one, condition `adapter` with that key; else
// the compiled one, `instant`, found in the compile cache); `#instant` / `#distilled` as served.
import type { GenerateInput, GenerateResult } from '../../../common/api/engine-schemas';
import { parseSkillModelKind } from '../openai/models';
import type { GlobalAdapterService } from './global-adapter-service';
import type { BundleRegistry } from './bundle-registry';
import type { DistilledLookup } from './compare-service';
import type { CompileService } from './compile-service';
import { conversationOf } from './playground-service';
import type { RecordInput, TrajectoryService } from './trajectory-service';

export interface ChatRecord {
  model: string;
  input: GenerateInput;
  result: GenerateResult;
  /** The request's `metadata` (string pairs), kept in the trajectory's details. */
  metadata?: Record<string, string> | null;
}

export class OpenAiRecorder {
  constructor(
    private readonly trajectories: Pick<TrajectoryService, 'record'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    private readonly compiler: Pick<CompileService, 'compileAdapter'>,
    private readonly adapters: Pick<GlobalAdapterService, 'globalHead'>,
    private readonly distilled: DistilledLookup | null = null,
  ) {}

  /** Never throws: a completion already sent must not fail because its record could not be kept. */
  async record(c: ChatRecord): Promise<void> {
    try {
      const current = await this.bundles.current();
      let who: Pick<RecordInput, 'skill' | 'condition' | 'adapterKey'> = {
        skill: null,
        condition: 'none',
        adapterKey: null,
      };
      const parsed = parseSkillModelKind(c.model);
      const ref = parsed?.ref;
      const distilled =
        parsed && parsed.kind !== 'instant' && this.distilled
          ? await this.distilled.distilledAdapter(parsed.ref)
          : null;
      if (distilled) {
        const s = distilled.row.skill;
        who = { skill: s && { name: s.name, version: s.version }, condition: 'adapter', adapterKey: distilled.row.key };
      } else if (ref) {
        const compiled = await this.compiler.compileAdapter(ref); // the adapter it ran with: cached by now
        who = {
          skill: { name: compiled.result.skill.name, version: compiled.result.skill.version },
          condition: 'instant',
          adapterKey: compiled.row.key,
        };
      } else if (c.model === 'global') {
        const head = await this.adapters.globalHead();
        who = { skill: null, condition: 'adapter', adapterKey: head?.adapterKey ?? null };
      }
      this.trajectories.record([
        {
          source: 'openai',
          ...who,
          bundle: { id: current.bundle.manifest.id, sha256: current.sha256 },
          sampling: { ...c.input.sampling, maxTokens: c.input.maxTokens ?? 256 },
          messages: conversationOf(c.input, c.result.text),
          details: {
            model: c.model,
            finishReason: c.result.finishReason,
            promptTokens: c.result.promptTokens,
            completionTokens: c.result.completionTokens,
            ...(c.input.stop && { stop: c.input.stop }),
            ...(c.metadata && { metadata: c.metadata }),
          },
        },
      ]);
    } catch (err) {
      console.warn(`pskills: an openai trajectory was not stored: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
