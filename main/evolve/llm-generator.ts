// The LLM generator: asks the OpenAI-compatible chat-completions endpoint the user configured (a local
// server or a cloud API: settings llmBaseUrl, llmModel, llmApiKey) for revised SKILL.md texts, one
// request per candidate, through the shared client (main/llm/chat-client.ts). A reply that is not a
// valid SKILL.md of the same skill is skipped; when none is valid the error names the endpoint.
import { StudioError } from '../../common/errors';
import { parseSkillMd } from '../skills/parse';
import { ChatClient, type LlmEndpoint } from '../llm/chat-client';
import type { Generator, Proposal, ProposeInput } from './generator';

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
  private readonly client: ChatClient;

  constructor(endpoint: LlmEndpoint, fetchFn?: typeof fetch) {
    this.client = new ChatClient(endpoint, fetchFn);
  }

  async propose(input: ProposeInput): Promise<Proposal[]> {
    const out: Proposal[] = [];
    const problems: string[] = [];
    const name = nameOf(input.parent);
    for (let k = 0; k < input.count; k++) {
      const reply = await this.client.complete(
        [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: userMessage(input, k) },
        ],
        { temperature: 0.7, signal: input.signal },
      );
      const text = skillFromReply(reply);
      const parsed = parseSkillMd(text);
      const error = parsed.diagnostics.find((d) => d.severity === 'error');
      if (error) problems.push(`reply ${k + 1}: line ${error.line}: ${error.message}`);
      else if (parsed.frontmatter.name !== name)
        problems.push(`reply ${k + 1}: its name is "${parsed.frontmatter.name ?? ''}", not "${name ?? ''}"`);
      else if (text !== input.parent && !out.some((p) => p.text === text))
        out.push({ text, operator: 'llm', note: `${this.client.endpoint.model}, reply ${k + 1}` });
    }
    if (!out.length && problems.length)
      throw new StudioError('internal', `${this.client.url}: no reply was a valid SKILL.md (${problems[0]})`, {
        problems,
      });
    return out;
  }
}
