// The LLM summariser: asks the OpenAI-compatible chat-completions endpoint the user configured
// (settings llmBaseUrl, llmModel, llmApiKey, the same ones evolve's generator reads) to write the
// lesson. Its reply must be a valid SKILL.md; the lesson's name is set to `lesson-<world>` whatever
// the model wrote. A small client of its own: evolve's (main/evolve/llm-generator.ts) asks for skill
// revisions and keeps its request private.
import { StudioError } from '../../common/errors';
import { parseSkillMd } from '../skills/parse';
import type { Summariser } from './run';
import { lessonName, type LessonInput } from './summarise';

export interface LlmEndpoint {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  timeoutMs?: number;
}

const TIMEOUT_MS = 120_000;

const SYSTEM = [
  'You summarise what an agent did right into a lesson: a short SKILL.md (YAML frontmatter with name and',
  'description, then Markdown). Read the verified conversations the user gives, find the rule every answer',
  'follows (formats, words, tool calls, order), and state it as a few plain rules with one or two examples.',
  'At most 150 words. Reply with the SKILL.md only, inside one ```markdown code block.',
].join(' ');

/** The endpoint from the studio's settings, or null when none is configured. */
export function endpointFromSettings(settings: Record<string, unknown>): LlmEndpoint | null {
  const { llmBaseUrl, llmModel, llmApiKey } = settings;
  if (typeof llmBaseUrl !== 'string' || !llmBaseUrl || typeof llmModel !== 'string' || !llmModel) return null;
  return {
    baseUrl: llmBaseUrl,
    model: llmModel,
    apiKey: typeof llmApiKey === 'string' && llmApiKey ? llmApiKey : null,
  };
}

function conversation(input: LessonInput): string {
  return input.trajectories
    .map((t, i) => [`Conversation ${i + 1}:`, ...t.messages.map((m) => `${m.role}: ${m.content}`)].join('\n'))
    .join('\n\n');
}

/** The SKILL.md in a reply (the first fenced block that opens with frontmatter, else the reply), renamed. */
export function lessonFromReply(reply: string, world: string): string {
  let text = reply.trim();
  for (const m of reply.matchAll(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm)) {
    if (m[2]!.trimStart().startsWith('---')) {
      text = m[2]!.trim();
      break;
    }
  }
  text = text.replace(/^(---\s*\n[\s\S]*?^name:)[^\n]*$/m, `$1 ${lessonName(world)}`) + '\n';
  const parsed = parseSkillMd(text);
  const error = parsed.diagnostics.find((d) => d.severity === 'error');
  if (error)
    throw new StudioError(
      'internal',
      `the model's lesson is not a valid SKILL.md: line ${error.line}: ${error.message}`,
    );
  if (parsed.frontmatter.name !== lessonName(world))
    throw new StudioError('internal', "the model's lesson has no frontmatter name");
  return text;
}

export class LlmSummariser implements Summariser {
  readonly name: string;
  private readonly url: string;

  constructor(
    private readonly endpoint: LlmEndpoint,
    private readonly fetchFn: typeof fetch = fetch,
  ) {
    let url: URL;
    try {
      url = new URL(endpoint.baseUrl);
    } catch {
      throw new StudioError('invalid_input', `llmBaseUrl: "${endpoint.baseUrl}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new StudioError('invalid_input', `llmBaseUrl: "${endpoint.baseUrl}" is not an http(s) URL`);
    this.url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.name = `llm ${endpoint.model}`;
  }

  async lesson(input: LessonInput, signal: AbortSignal): Promise<string> {
    const timeoutMs = this.endpoint.timeoutMs ?? TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let body: string;
    try {
      res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: this.endpoint.model,
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: conversation(input) },
          ],
          temperature: 0,
        }),
        signal: AbortSignal.any([signal, timeout]),
      });
      body = await res.text();
    } catch (err) {
      if (signal.aborted) throw new StudioError('cancelled', 'continual run cancelled');
      if (timeout.aborted) throw new StudioError('internal', `${this.url}: no answer within ${timeoutMs / 1000} s`);
      throw new StudioError('internal', `${this.url}: cannot reach the endpoint (${(err as Error).message})`);
    }
    let json: { choices?: { message?: { content?: unknown } }[]; error?: { message?: unknown } };
    try {
      json = JSON.parse(body) as typeof json;
    } catch {
      throw new StudioError('internal', `${this.url}: HTTP ${res.status}, not JSON: ${body.slice(0, 200)}`);
    }
    if (!res.ok)
      throw new StudioError(
        'internal',
        `${this.url}: HTTP ${res.status}: ${typeof json.error?.message === 'string' ? json.error.message : body.slice(0, 200)}`,
      );
    const text = json.choices?.[0]?.message?.content;
    if (typeof text !== 'string')
      throw new StudioError('internal', `${this.url}: the reply has no choices[0].message.content string`);
    return lessonFromReply(text, input.world);
  }
}
