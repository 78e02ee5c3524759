// Answering with a skill in context, as compare's in_context column, verify.run and the continual
// measure all do: the skill's text as the system message, cut at a token boundary so that the prompt
// and the answer fit the model's context, and a batch of rows through the engine worker.
import { headForContext, type BundleInfo, type ChatMessage, type GenerateRequest, type RowResult } from '../engine';
import { sharedEngine } from '../engine/engine-client';

const REPLACEMENT = /\uFFFD+$/u;

/** The messages with `system` as their system message: prepended, or joined before the one they have. */
export function withSystem(system: string, messages: readonly ChatMessage[]): ChatMessage[] {
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${system}\n\n${first.content}` }, ...rest];
  return [{ role: 'system', content: system }, ...messages];
}

/**
 * The system prompt of the in_context column: the skill text, cut (at a token boundary) so that the
 * rendered prompt (a user message, or chat messages) plus `maxTokens` fits the model's context.
 * Returns the text and whether it was cut.
 */
export function fitSkillText(
  bundle: BundleInfo,
  skillText: string,
  prompt: string | readonly ChatMessage[],
  maxTokens: number,
): { text: string; truncated: boolean } {
  const messages: readonly ChatMessage[] = typeof prompt === 'string' ? [{ role: 'user', content: prompt }] : prompt;
  const render = (system: string) => bundle.chat.render(withSystem(system, messages));
  const count = (system: string) => bundle.tokenizer.encode(render(system)).length;
  const limit = bundle.manifest.architecture.max_positions - maxTokens;
  const head = headForContext(bundle, skillText); // what is past it cannot fit: never tokenized
  if (head === skillText && count(skillText) <= limit) return { text: skillText, truncated: false };
  const ids = bundle.tokenizer.encode(head);
  let room = limit - count('');
  while (room > 0) {
    // A cut inside a multi-byte character decodes to U+FFFD: drop it.
    const cut = bundle.tokenizer.decode(ids.slice(0, room)).replace(REPLACEMENT, '');
    const over = count(cut) - limit;
    if (over <= 0) return { text: cut, truncated: true };
    room -= over;
  }
  return { text: '', truncated: true };
}

/** The chat tokenized, with `system` (cut by fitSkillText) as its system message when not null. */
export function chatPrompt(
  bundle: BundleInfo,
  messages: readonly ChatMessage[],
  system: string | null,
  maxTokens: number,
): { ids: number[]; truncated: boolean } {
  const fit = system === null ? null : fitSkillText(bundle, system, messages, maxTokens);
  const chat = fit ? withSystem(fit.text, messages) : messages;
  return { ids: bundle.tokenizer.encode(bundle.chat.render(chat)), truncated: fit?.truncated ?? false };
}

/** The rows' final results, generated in one batch in the engine worker (their tokens not watched). */
export async function answerBatch(
  bundle: BundleInfo,
  requests: readonly GenerateRequest[],
  signal?: AbortSignal,
): Promise<RowResult[]> {
  const it = sharedEngine().generateBatch(bundle, requests, { signal });
  let step = await it.next();
  while (!step.done) step = await it.next();
  return step.value;
}
