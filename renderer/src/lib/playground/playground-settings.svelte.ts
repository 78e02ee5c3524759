// The Playground's form: chat or raw prompt, sampling and limits. Empty number fields are left out
// of the request so the engine's own defaults apply (the placeholders name them); the request is
// checked against the contract's GenerateInput schema before it is sent.
import { GenerateInput, type AdapterChoice, type ChatMessage } from '../../../../common/api/engine-schemas';
import { chatMessages } from './chat';
import { issueSentence, labelledIssue } from '../shared/field-words';

export type PromptMode = 'chat' | 'raw';

export type RequestCheck = { ok: true; input: GenerateInput } | { ok: false; message: string };

/** The fields' labels, by request key: the form's and its messages'. */
export const FIELD_LABELS: Record<string, string> = {
  messages: 'Message',
  adapter: 'Adapter',
  prompt: 'Prompt',
  maxTokens: 'Max tokens',
  stop: 'Stop strings',
  temperature: 'Temperature',
  topK: 'Top-k',
  topP: 'Top-p',
  repetitionPenalty: 'Repetition penalty',
  seed: 'Seed',
};

/** One stop string a line; `\n`, `\t` and `\\` stand for a newline, a tab and a backslash. */
export function parseStopStrings(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/\\([nt\\])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\')));
}

const given = (n: number | null | undefined): n is number => typeof n === 'number' && Number.isFinite(n);

export class GenerationSettings {
  mode = $state<PromptMode>('chat');
  system = $state('');
  user = $state('');
  prompt = $state('');
  temperature = $state<number | null>(0.7);
  topK = $state<number | null>(40);
  topP = $state<number | null>(0.95);
  repetitionPenalty = $state<number | null>(null);
  seed = $state<number | null>(null);
  maxTokens = $state<number | null>(256);
  stop = $state('');

  /**
   * The request these fields make, or why it would be rejected: in chat mode, `history` (earlier turns)
   * then the user message; `adapter` as chosen in the picker. The fields' ranges are checked before
   * an empty message is pointed out.
   */
  request(history: readonly ChatMessage[] = [], adapter: AdapterChoice | null = null): RequestCheck {
    const { temperature, topK, topP, repetitionPenalty, seed } = this;
    const sampling = Object.fromEntries(
      Object.entries({ temperature, topK, topP, repetitionPenalty, seed }).filter(([, n]) => given(n)),
    );
    const stop = parseStopStrings(this.stop);
    const raw = {
      ...(this.mode === 'chat'
        ? { messages: chatMessages(this.system, history, this.user) }
        : { prompt: this.prompt || ' ' }),
      ...(given(this.maxTokens) ? { maxTokens: this.maxTokens } : {}),
      ...(stop.length ? { stop } : {}),
      sampling,
      ...(adapter ? { adapter } : {}),
    };
    const parsed = GenerateInput.safeParse(raw);
    if (parsed.success) {
      if (this.mode === 'chat' && !this.user.trim()) return { ok: false, message: 'Write a user message.' };
      if (this.mode === 'raw' && !this.prompt) return { ok: false, message: 'Write a prompt.' };
      return { ok: true, input: parsed.data };
    }
    const issue = parsed.error.issues[0]!;
    const field = [...issue.path].reverse().find((p): p is string => typeof p === 'string' && p in FIELD_LABELS);
    return {
      ok: false,
      message: field ? labelledIssue(FIELD_LABELS[field]!, issue.message) : issueSentence('', issue.message),
    };
  }
}
