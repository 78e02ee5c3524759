// Self-written practice (docs/distill.md "Practice"): requests a user of the skill would send, written by
// the configured OpenAI-compatible endpoint when there is one (a stronger writer), else by the teacher
// (the bundle's base with the skill in context, through the engine). The replies are filtered (empties,
// duplicates, copies of the skill's sentences dropped and counted). An endpoint that fails, times out or
// answers nothing usable falls back to the engine with a warning, and none of its replies are kept.
import {
  filterWritten,
  writeHeadings,
  writePrompts,
  WRITE_SAMPLING,
  WRITE_TOKENS,
  type Dropped,
} from '../../../common/distill/practice';
import type { BundleInfo, GenerateRequest } from '../../engine';
import { ChatClient, endpointFromSettings, type LlmEndpoint } from '../../llm/chat-client';
import { answerBatch, chatPrompt } from '../../skills/answer';
import type { SettingsRepo } from '../../store/settings-repo';

/** Per endpoint request: a slow writer falls back rather than hold the distillation. */
export const WRITE_TIMEOUT_MS = 60_000;

export interface Written {
  written: string[];
  dropped: Dropped;
  writer: 'endpoint' | 'engine' | null;
  warnings: string[];
}

type EngineWrite = (
  bundle: BundleInfo,
  system: string,
  prompts: readonly string[],
  signal: AbortSignal,
) => Promise<string[]>;

/** Each prompt with `system` (cut to fit) as its system message, sampled as WRITE_SAMPLING with prompt
 *  i's seed i (Python's Teacher.write samples the same way). */
export function writeRequests(bundle: BundleInfo, system: string, prompts: readonly string[]): GenerateRequest[] {
  return prompts.map((p, i) => ({
    prompt: chatPrompt(bundle, [{ role: 'user', content: p }], system, WRITE_TOKENS).ids,
    maxNewTokens: WRITE_TOKENS,
    sampling: { ...WRITE_SAMPLING, seed: i },
  }));
}

/** The base answers the writer's prompts in the engine worker. */
export const engineWrite: EngineWrite = async (bundle, system, prompts, signal) =>
  (await answerBatch(bundle, writeRequests(bundle, system, prompts), signal)).map((r) => r.text);

export class PracticeWriter {
  constructor(
    private readonly settings: Pick<SettingsRepo, 'get'> | null,
    private readonly engine: EngineWrite = engineWrite,
    private readonly client: (e: LlmEndpoint) => Pick<ChatClient, 'complete' | 'url'> = (e) => new ChatClient(e),
  ) {}

  /** The endpoint self-written practice would use, or null (then the engine writes). */
  endpoint(): LlmEndpoint | null {
    return this.settings ? endpointFromSettings(this.settings.get() as Record<string, unknown>) : null;
  }

  async write(bundle: BundleInfo, skillText: string, signal: AbortSignal): Promise<Written> {
    const prompts = writePrompts(writeHeadings(skillText));
    const warnings: string[] = [];
    const endpoint = this.endpoint();
    if (endpoint) {
      try {
        const client = this.client({ ...endpoint, timeoutMs: endpoint.timeoutMs ?? WRITE_TIMEOUT_MS });
        const replies: string[] = [];
        for (const p of prompts)
          replies.push(
            await client.complete(
              [
                { role: 'system', content: skillText },
                { role: 'user', content: p },
              ],
              { temperature: 0.7, signal },
            ),
          );
        const got = filterWritten(replies, skillText);
        if (got.kept.length) return { written: got.kept, dropped: got.dropped, writer: 'endpoint', warnings };
        warnings.push(`practice writer ${client.url}: no usable request in its replies; the engine writes instead`);
      } catch (err) {
        if (signal.aborted) throw err;
        warnings.push(`practice writer: ${(err as Error).message}; the engine writes instead`);
      }
    }
    try {
      const got = filterWritten(await this.engine(bundle, skillText, prompts, signal), skillText);
      return { written: got.kept, dropped: got.dropped, writer: 'engine', warnings };
    } catch (err) {
      if (signal.aborted) throw err;
      warnings.push(`self-written practice: ${(err as Error).message}; practising on the other sources`);
      return { written: [], dropped: { empty: 0, duplicate: 0, copy: 0 }, writer: null, warnings };
    }
  }
}
