// The Playground's generation (engine.generate over the API): GenerationService's generate (the base
// model or the adapter the request chooses), then the run kept as a trajectory (source `playground`,
// with the skill version when the adapter is a skill's) when the studio keeps trajectories. `pskills generate` and the
// OpenAI endpoint call the engine directly and are not recorded here (the endpoint records on request).
import type { GenerateInput, GenerateResult, TokenDelta } from '../../../common/api/engine-schemas';
import type { TrajectoryMessage } from '../../../common/api/trajectory-schemas';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { BundleRegistry } from './bundle-registry';
import type { GenerationService } from './generation-service';
import type { RecordInput, TrajectoryService } from './trajectory-service';

/** The conversation a generation makes: its messages (a raw prompt as one user turn) and the answer. */
export function conversationOf(input: GenerateInput, answer: string): TrajectoryMessage[] {
  const asked: TrajectoryMessage[] = input.messages
    ? input.messages.map((m) => ({ role: m.role, content: m.content }))
    : [{ role: 'user', content: input.prompt! }];
  return [...asked, { role: 'assistant', content: answer }];
}

export class PlaygroundService {
  constructor(
    private readonly generation: Pick<GenerationService, 'generate'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    private readonly adapters: Pick<AdaptersRepo, 'resolve'>,
    private readonly trajectories: Pick<TrajectoryService, 'record'>,
  ) {}

  /** What ran: the base model, a skill version's compiled adapter (instant), or another adapter. */
  private ranWith(
    input: GenerateInput,
    adapterId: string | null | undefined,
  ): Pick<RecordInput, 'skill' | 'condition' | 'adapterKey'> {
    if (!input.adapter || !adapterId) return { skill: null, condition: 'none', adapterKey: null };
    const row = this.adapters.resolve(adapterId);
    if (input.adapter.kind === 'skill' && row.skill)
      return {
        skill: { name: row.skill.name, version: row.skill.version },
        condition: 'instant',
        adapterKey: row.key,
      };
    return { skill: null, condition: 'adapter', adapterKey: row.key };
  }

  async generate(
    input: GenerateInput,
    ctx: { emit(e: TokenDelta): void; signal: AbortSignal },
  ): Promise<GenerateResult> {
    const r = await this.generation.generate(input, ctx);
    if (r.finishReason !== 'cancelled' && !ctx.signal.aborted) {
      const current = await this.bundles.current().catch(() => null);
      let ran: Pick<RecordInput, 'skill' | 'condition' | 'adapterKey'>;
      try {
        ran = this.ranWith(input, r.adapter);
      } catch {
        ran = { skill: null, condition: 'adapter', adapterKey: null }; // the adapter was deleted meanwhile
      }
      this.trajectories.record([
        {
          source: 'playground',
          ...ran,
          bundle: current && { id: current.bundle.manifest.id, sha256: current.sha256 },
          sampling: { ...input.sampling, maxTokens: input.maxTokens ?? 256 },
          messages: conversationOf(input, r.text),
          details: {
            ...(input.prompt !== undefined && { raw: true }),
            ...(input.stop && { stop: input.stop }),
            ...(input.adapter && { adapter: input.adapter }),
            finishReason: r.finishReason,
            promptTokens: r.promptTokens,
            completionTokens: r.completionTokens,
          },
        },
      ]);
    }
    return r;
  }
}
