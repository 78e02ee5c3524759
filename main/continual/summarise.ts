// Lessons: a short SKILL.md summarised from an episode's verified trajectories. The
// template summariser works offline and is deterministic: each assistant turn is generalised (spans
// copied from the request become <item>, from a tool result <value>), equal forms are counted, and
// the lesson states the forms, what the requests said that no answer repeated, and a few examples.
import type { SuiteMessage } from './suite';

export interface LessonTrajectory {
  messages: readonly SuiteMessage[];
}

export interface LessonInput {
  /** The world (SkillWorld skill) the trajectories came from; the lesson is `lesson-<world>`. */
  world: string;
  episode: number;
  trajectories: readonly LessonTrajectory[];
}

const MAX_EXAMPLES = 3;
/** Words too common to be worth "avoid" (they are in most requests of any task). */
const COMMON = new Set(
  'a an and are as at be by can could did do does every for from get give has have how i in into is it its me my need new note of on or please put record say says show that the them then these this to up use using was what when which will with word write you your'.split(
    ' ',
  ),
);

export const lessonName = (world: string) => `lesson-${world}`;

/** Identifiers a message carries: a word then a number ("claim 6163", "indigo 149"). */
const ITEM = /[A-Za-z]+ \d+/g;

/** An answer with the spans it copied from earlier messages replaced by <item> / <value>. */
export function generalise(answer: string, before: readonly SuiteMessage[]): string {
  const spans: { text: string; as: string }[] = [];
  for (const m of before) {
    if (m.role !== 'user' && m.role !== 'tool') continue;
    for (const hit of m.content.matchAll(ITEM))
      spans.push({ text: hit[0], as: m.role === 'tool' ? '<value>' : '<item>' });
  }
  spans.sort((a, b) => b.text.length - a.text.length);
  let out = answer;
  for (const s of spans) out = out.split(s.text).join(s.as);
  return out;
}

interface Form {
  trigger: 'request' | 'tool';
  text: string;
  count: number;
  /** The first request that led to it, generalised. */
  request: string;
}

const lastUser = (messages: readonly SuiteMessage[]) => messages.findLast((m) => m.role === 'user')?.content ?? '';

/** Inline code for one-line text, a fenced block (indented under the bullet) for several lines. */
function code(text: string): string {
  if (text.includes('\n')) return `\n\n  \`\`\`text\n${text.replace(/^/gm, '  ')}\n  \`\`\`\n`;
  const ticks = text.includes('`') ? '``' : '`';
  return ticks === '`' ? `\`${text}\`` : `\`\` ${text} \`\``;
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);

/** The lesson's SKILL.md; the same trajectories give the same bytes. */
export function templateLesson(input: LessonInput): string {
  const forms = new Map<string, Form>();
  const examples: string[] = [];
  const requestWords = new Map<string, number>();
  const answerWords = new Set<string>();
  for (const t of input.trajectories) {
    const request = lastUser(t.messages);
    for (const w of words(request)) requestWords.set(w, (requestWords.get(w) ?? 0) + 1);
    t.messages.forEach((m, i) => {
      if (m.role !== 'assistant') return;
      for (const w of words(m.content)) answerWords.add(w);
      const before = t.messages.slice(0, i);
      const trigger = before.at(-1)?.role === 'tool' ? 'tool' : 'request';
      const text = generalise(m.content.trim(), before);
      const key = `${trigger}\u0000${text}`;
      const known = forms.get(key);
      if (known) known.count++;
      else forms.set(key, { trigger, text, count: 1, request: oneLine(generalise(lastUser(before), before)) });
    });
    const answer = t.messages.at(-1);
    if (examples.length < MAX_EXAMPLES && answer?.role === 'assistant')
      examples.push(`- "${oneLine(request)}" → ${code(answer.content.trim())}`);
  }
  const n = input.trajectories.length;
  const turns = [...forms.values()].reduce((s, f) => s + f.count, 0);
  const rules = [...forms.values()]
    .sort((a, b) => b.count - a.count)
    .map((f) => {
      const when = f.trigger === 'tool' ? 'After a tool result, reply' : 'When asked, reply';
      return `- ${when} ${code(f.text)} (${f.count} of ${turns} replies), as for "${f.request}".`;
    });
  const avoid = [...requestWords]
    .filter(([w, c]) => c >= 2 && !answerWords.has(w) && !COMMON.has(w))
    .map(([w]) => w)
    .sort();
  const name = lessonName(input.world);
  return [
    '---',
    `name: ${name}`,
    `description: What worked for ${input.world} requests, from ${n} verified answers (episode ${input.episode}).`,
    '---',
    '',
    `# Lesson: ${input.world}`,
    '',
    `Summarised from ${n} answers that passed the verifier. <item> is the thing the request names; <value> is what a tool returned.`,
    '',
    '## Rules',
    '',
    ...rules,
    ...(avoid.length
      ? ['', '## Avoid', '', `- Words the requests used and no accepted answer did: ${avoid.join(', ')}.`]
      : []),
    '',
    '## Examples',
    '',
    ...examples,
    '',
  ].join('\n');
}
