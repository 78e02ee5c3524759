// The LLM generator: asks the OpenAI-compatible chat-completions endpoint the user configured (a local
// server or a cloud API: settings llmBaseUrl, llmModel, llmApiKey) for revised SKILL.md texts, one
// request per candidate. A reply that is not a valid SKILL.md of the same skill is skipped; when none
// is valid, or the endpoint fails, the error names the endpoint and what went wrong.
import { StudioError } from '../../common/errors';
import { parseSkillMd } from '../skills/parse';
import type { Generator, Proposal, ProposeInput } from './generator';

export interface LlmConfig {
  /** e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  apiKey: string | null;
  /** Per request; default 120 s. */
  timeoutMs?: number;
}

export const LLM_TIMEOUT_MS = 120_000;
/** Characters of a test's prompt shown to the model. */
const PROMPT_CHARS = 300;

const SYSTEM = [
  'You revise agent skills: SKILL.md files, YAML frontmatter then Markdown instructions.',
  'A verifier runs the tests listed by the user against a model that reads the skill; revise the skill so that',
  'model passes more of them. Useful edits: move the rules the tests check to the top, restate rules as a',
  'checklist, drop sections no test needs, merge duplicated rules, state a rule more plainly.',
  'Keep the frontmatter (name and description) as it is. Reply with the complete revised SKILL.md only,',
  'inside one ```markdown code block.',
].join(' ');

function userMessage(input: ProposeInput, k: number): string {
  const tests = input.tests.slice(0, 20).map((t) => {
    const prompt = (t.prompt ?? t.messages!.at(-1)!.content).replace(/\s+/g, ' ').slice(0, PROMPT_CHARS);
    return `- ${t.id}: "${prompt}" → the answer must meet ${JSON.stringify(t.expect)}`;
  });
  const failed = input.failures.slice(0, 20).map((f) => `- ${f.id}${f.reason ? `: ${f.reason}` : ''}`);
  return [
    'The skill:',
    '```markdown',
    input.parent,
    '```',
    '',
    tests.length ? `Its tests:\n${tests.join('\n')}` : 'It has no tests; make its rules clearer.',
    ...(failed.length ? ['', `Tests the current text fails:\n${failed.join('\n')}`] : []),
    '',
    `This is revision ${k + 1} of ${input.count}; make each revision differ from the others.`,
  ].join('\n');
}

/** The SKILL.md in a reply: the first fenced block that opens with frontmatter, else the reply. */
export function skillFromReply(reply: string): string {
  const fences = reply.matchAll(/^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\1[ \t]*$/gm);
  for (const m of fences) if (m[2]!.trimStart().startsWith('---')) return m[2]!.trimStart();
  return reply.trim() + '\n';
}

function nameOf(text: string): string | undefined {
  return parseSkillMd(text).frontmatter.name;
}

export class LlmGenerator implements Generator {
  readonly kind = 'llm';
  private readonly url: string;

  constructor(
    private readonly config: LlmConfig,
    private readonly fetchFn: typeof fetch = fetch,
  ) {
    let url: URL;
    try {
      url = new URL(config.baseUrl);
    } catch {
      throw new StudioError('invalid_input', `llmBaseUrl: "${config.baseUrl}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new StudioError('invalid_input', `llmBaseUrl: "${config.baseUrl}" is not an http(s) URL`);
    if (!config.model.trim()) throw new StudioError('invalid_input', 'llmModel: empty');
    this.url = `${config.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async propose(input: ProposeInput): Promise<Proposal[]> {
    const out: Proposal[] = [];
    const problems: string[] = [];
    const name = nameOf(input.parent);
    for (let k = 0; k < input.count; k++) {
      const reply = await this.ask(userMessage(input, k), input.signal);
      const text = skillFromReply(reply);
      const parsed = parseSkillMd(text);
      const error = parsed.diagnostics.find((d) => d.severity === 'error');
      if (error) problems.push(`reply ${k + 1}: line ${error.line}: ${error.message}`);
      else if (parsed.frontmatter.name !== name)
        problems.push(`reply ${k + 1}: its name is "${parsed.frontmatter.name ?? ''}", not "${name ?? ''}"`);
      else if (text !== input.parent && !out.some((p) => p.text === text))
        out.push({ text, operator: 'llm', note: `${this.config.model}, reply ${k + 1}` });
    }
    if (!out.length && problems.length)
      throw new StudioError('internal', `${this.url}: no reply was a valid SKILL.md (${problems[0]})`, { problems });
    return out;
  }

  /** One chat completion; the assistant's text. */
  private async ask(content: string, signal?: AbortSignal): Promise<string> {
    const timeoutMs = this.config.timeoutMs ?? LLM_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    let body: string;
    try {
      res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: this.config.model,
          messages: [
            { role: 'system', content: SYSTEM },
            { role: 'user', content },
          ],
          temperature: 0.7,
        }),
        signal: both,
      });
      body = await res.text();
    } catch (err) {
      if (signal?.aborted) throw new StudioError('cancelled', 'evolve cancelled');
      if (timeout.aborted) throw new StudioError('internal', `${this.url}: no answer within ${timeoutMs / 1000} s`);
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new StudioError(
        'internal',
        `${this.url}: cannot reach the endpoint (${cause?.code ?? cause?.message ?? (err as Error).message})`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new StudioError('internal', `${this.url}: HTTP ${res.status}, not JSON: ${body.slice(0, 200)}`);
    }
    if (!res.ok) {
      const message = (json as { error?: { message?: unknown } }).error?.message;
      throw new StudioError(
        'internal',
        `${this.url}: HTTP ${res.status}: ${typeof message === 'string' ? message : body.slice(0, 200)}`,
      );
    }
    const text = (json as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof text !== 'string')
      throw new StudioError('internal', `${this.url}: the reply has no choices[0].message.content string`);
    return text;
  }
}
