// Multi-turn chat in the Playground, pure (unit-tested): the messages a new turn sends, and which
// exchanges count as history. An exchange is a user message and the reply a run gave; a reply that
// failed is not history (the message goes back to the input), a stopped one is (its text was seen).
import type { ChatMessage } from '../../../../common/api/engine-schemas';

export type ReplyStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

/** The turns so far plus the shown exchange, when its run ended with text the user saw. */
export function settledTurns(
  turns: readonly ChatMessage[],
  current: { user: string } | null,
  status: ReplyStatus,
  reply: string,
): ChatMessage[] {
  if (!current || (status !== 'done' && status !== 'cancelled')) return [...turns];
  return [...turns, { role: 'user', content: current.user }, { role: 'assistant', content: reply }];
}

/** What a turn sends: the system message (when written), the history, then the new user message. */
export function chatMessages(system: string, history: readonly ChatMessage[], user: string): ChatMessage[] {
  return [
    ...(system.trim() ? [{ role: 'system' as const, content: system }] : []),
    ...history,
    { role: 'user', content: user },
  ];
}
