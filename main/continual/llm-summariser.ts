// The LLM summariser: asks the OpenAI-compatible chat-completions endpoint the user configured
// (settings llmBaseUrl, llmModel, llmApiKey, the same ones evolve's generator reads) to write the
// lesson, through the shared client (main/llm/chat-client.ts). Its reply must be a valid SKILL.md;
// the lesson's name is set to `lesson-<world>` whatever the model wrote.
import { StudioError } from '../../common/errors';
import { ChatClient, type LlmEndpoint } from '../llm/chat-client';
import { parseSkillMd } from '../skills/parse';
import type { Summariser } from './run';
import { lessonName, type LessonInput } from './summarise';

const SYSTEM = [
  'You summarise what an agent did right into a lesson: a short SKILL.md (YAML frontmatter with name and',
  'description, then Markdown). Read the verified conversations the user gives, find the rule every answer',
  'follows (formats, words, tool calls, order), and state it as a few plain rules with one or two examples.',
  'At most 150 words. Reply with the SKILL.md only, inside one ```markdown code block.',
].join(' ');

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
  private readonly client: ChatClient;

  constructor(endpoint: LlmEndpoint, fetchFn?: typeof fetch) {
    this.client = new ChatClient(endpoint, fetchFn);
    this.name = `llm ${endpoint.model}`;
  }

  async lesson(input: LessonInput, signal: AbortSignal): Promise<string> {
    const text = await this.client.complete(
      [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: conversation(input) },
      ],
      { temperature: 0, signal },
    );
    return lessonFromReply(text, input.world);
  }
}
