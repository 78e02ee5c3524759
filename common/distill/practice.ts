// Practice questions for distilling a skill, only from what the user has (docs/bundle-format.md
// "train_step"): the skill's verifier tests, its Examples section, and one cloze question per section
// (heading → its body, which the teacher answers with the whole skill in context). Each keeps its source.

// 'user': typed in the studio's practice panel (never derived here). 'trajectory': the task of a
// verified trajectory (a continual lesson's, docs/continual.md).
export type PracticeSource = 'test' | 'example' | 'cloze' | 'user' | 'trajectory';

export interface PracticeQuestion {
  readonly question: string;
  readonly source: PracticeSource;
  /** An answer to teacher-force (one the verifier passed); absent: the teacher answers greedily. */
  readonly answer?: string;
}

interface Section {
  readonly level: number;
  readonly heading: string;
  readonly body: string;
}

function sections(markdown: string): Section[] {
  const text = markdown.replace(/\r\n?/g, '\n').replace(/^---\n[\s\S]*?\n---\n/, ''); // frontmatter
  const out: { level: number; heading: string; lines: string[] }[] = [];
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = fence ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) out.push({ level: h[1]!.length, heading: h[2]!, lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out.map((s) => ({ level: s.level, heading: s.heading, body: s.lines.join('\n').trim() }));
}

const MARKER = /^\s*(?:[-*+]|\d+[.)])\s+/;
const ARROW = /\s+(?:→|->|=>)\s+/;
const ASKED = /^\s*(?:\*\*)?(?:user|q|question|input|prompt|request)(?:\*\*)?\s*[:>-]\s*(?:\*\*)?\s*/i;

/** Questions an Examples section asks: `User: …` / `Q: …` lines, else its list items and quotes. */
function exampleQuestions(body: string): string[] {
  const lines = body.split('\n');
  const unlisted = (l: string) => l.replace(MARKER, '').replace(/^\s*>\s*/, '');
  const asked = lines.filter((l) => ASKED.test(unlisted(l))).map((l) => unlisted(l).replace(ASKED, ''));
  const picked = asked.length > 0 ? asked : lines.filter((l) => MARKER.test(l) || /^\s*>/.test(l)).map(unlisted);
  // `"question" → answer` items (a continual lesson's Examples): the question is what comes before the arrow.
  const asks = picked.map((l) => (ARROW.test(l) ? l.split(ARROW)[0]! : l));
  return asks.map((l) => l.replace(/^["“'`]+|["”'`]+$/g, '').trim()).filter((q) => q.length >= 2);
}

/** Questions from tests (their prompts), the Examples section and a cloze per non-empty section, in that
 * order, without duplicates. Throws naming every source tried when there are none. */
export function practiceQuestions(skill: string, tests: readonly { prompt: string }[] = []): PracticeQuestion[] {
  const out: PracticeQuestion[] = [];
  const seen = new Set<string>();
  const add = (question: string, source: PracticeSource) => {
    const q = question.trim();
    if (q && !seen.has(q)) {
      seen.add(q);
      out.push({ question: q, source });
    }
  };
  for (const t of tests) add(t.prompt, 'test');
  const all = sections(skill);
  for (const s of all.filter((x) => /^examples?\b/i.test(x.heading)))
    for (const q of exampleQuestions(s.body)) add(q, 'example');
  for (const s of all) if (s.body && s.level > 1) add(`What does the skill say under "${s.heading}"?`, 'cloze');
  if (out.length === 0)
    throw new Error(
      'no practice questions: tried the skill\'s tests (none), its Examples section (none with questions) and its sections (none with a heading and a body); add a test or an "## Examples" section',
    );
  return out;
}
