// The practice a skill's own text gives (docs/distill.md "Practice"): its Examples, one cloze per
// section, the template questions about it, and synthesized requests that use it. The same rules as
// training/src/pskills_train/distill/practice.py; tests/fixtures/practice-cases.json pins both.
import {
  answerable,
  body,
  cleanAnswer,
  hash,
  pick,
  sectionKind,
  sections,
  withoutExamples,
  type DocSection,
  type SkillDoc,
} from './practice-text';

export interface Drafted {
  readonly question: string;
  readonly answer?: string;
  /** The chat before the answer when it is more than one user turn (a test written as messages). */
  readonly messages?: PracticeTurn[];
}

/** A turn before the answer (the skill is never one: the teacher adds it as the system turn). */
export interface PracticeTurn {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string;
}

// Request / reply pairs as skills write them in Examples ("Request:"/"Reply:", "User:"/"Assistant:",
// "Input:"/"Output:", "Q:"/"A:"), the reply inline, in backticks or in a fence.
const PAIR =
  /^\s*(?:\*\*)?(?:request|user|input|prompt|q|question)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(?<q>.+?)\s*\n(?:\s*\n)*\s*(?:\*\*)?(?:reply|assistant|output|response|a|answer)(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*(?<a>`[^`\n]+`|[^\n]*\S[^\n]*|\n+```[^\n]*\n(?<fence>.*?)\n```)/gims;
const MARKER = /^\s*(?:[-*+]|\d+[.)])\s+/;
const ARROW = /\s+(?:→|->|=>)\s+/;
const ASKED = /^\s*(?:\*\*)?(?:user|q|question|input|prompt|request)(?:\*\*)?\s*[:>-]\s*(?:\*\*)?\s*/i;
const unquote = (s: string) => s.replace(/^["“'`]+|["”'`]+$/g, '').trim();

/** Copies of a pair in which the numbers and the Examples-only words (words the skill uses nowhere
 * outside its Examples) that its answer repeats from its question are redrawn: numbers with as many
 * digits, words with a generic noun (seeded). The Examples' rule practised on items they do not show. */
function variants(
  pair: Drafted & { answer: string },
  outside: ReadonlySet<string>,
  n: number,
  seed: number,
  ...key: (string | number)[]
): Drafted[] {
  const inAnswer = new Set((pair.answer.match(/\d+|[A-Za-z]{3,}/g) ?? []).map((w) => w.toLowerCase()));
  const tokens = [...new Set((pair.question.match(/\d+|[A-Za-z]{3,}/g) ?? []).map((w) => w.toLowerCase()))];
  const numbers = tokens.filter((r) => /^\d+$/.test(r) && inAnswer.has(r) && r.length <= 9);
  const words = tokens.filter((w) => /^[a-z]+$/.test(w) && inAnswer.has(w) && !outside.has(w));
  if (!numbers.length && !words.length) return [];
  return Array.from({ length: n }, (_, v) => {
    const map = new Map<string, string>();
    for (const r of numbers) {
      const lo = r.length === 1 ? 1 : 10 ** (r.length - 1);
      map.set(r, String(lo + (hash(seed, ...key, v, r) % (10 ** r.length - lo))));
    }
    for (const w of words) map.set(w, pick(LEXICON.nouns, seed, ...key, v, w));
    const sub = (t: string) =>
      t.replace(/\d+|[A-Za-z]+/g, (tok) => {
        const to = map.get(tok.toLowerCase());
        if (to === undefined) return tok;
        return /^[A-Z]/.test(tok) ? to.charAt(0).toUpperCase() + to.slice(1) : to;
      });
    return { question: sub(pair.question), answer: sub(pair.answer) };
  });
}

/** Copies per test with its numbers redrawn. */
export const TEST_VARIANTS = 3;

/** Copies of test questions with every number of the chat redrawn (as many digits; one mapping per copy,
 * so a tool call and its result keep the request's numbers): the test's shape on other items, so the
 * adapter copies a request's items instead of learning the tests' own. The teacher answers them. */
export function testVariants(tests: readonly Drafted[], n = TEST_VARIANTS, seed = 0): Drafted[] {
  const out: Drafted[] = [];
  for (let v = 0; v < n; v++)
    tests.forEach((t, k) => {
      const chat = t.messages ?? [{ role: 'user' as const, content: t.question }];
      const found = [...new Set(chat.flatMap((m) => m.content.match(/[0-9]+/g) ?? []))].filter((x) => x.length <= 9);
      if (!found.length) return;
      const map = new Map<string, string>();
      for (const r of found) {
        const lo = r.length === 1 ? 1 : 10 ** (r.length - 1);
        map.set(r, String(lo + (hash(seed, 'test-variant', k, v, r) % (10 ** r.length - lo))));
      }
      const sub = (x: string) => x.replace(/[0-9]+/g, (d) => map.get(d) ?? d);
      out.push({
        question: sub(t.question),
        ...(t.messages ? { messages: t.messages.map((m) => ({ role: m.role, content: sub(m.content) })) } : {}),
      });
    });
  return out;
}

/** Forced copies per Examples pair with its repeated numbers and Examples-only words redrawn. */
export const EXAMPLE_VARIANTS = 7;

/** An Examples section's pairs (the reply is the answer), each with EXAMPLE_VARIANTS copies whose
 * repeated numbers are redrawn; else its `"q" → a` items; else its asked lines (`User: …`), list
 * items and quotes as questions the teacher answers. */
export function examples(doc: SkillDoc, seed = 0): Drafted[] {
  const out: Drafted[] = [];
  const outside = new Set((withoutExamples(doc.text).match(/[A-Za-z]{3,}/g) ?? []).map((w) => w.toLowerCase()));
  for (const sec of sections(doc.text).filter((s) => sectionKind(s.heading) === 'examples')) {
    const text = body(doc.text, sec);
    const pairs = [...text.matchAll(PAIR)].flatMap((m) => {
      let a = m.groups!.fence ?? m.groups!.a!.trim();
      if (a.startsWith('`') && a.endsWith('`') && a.length > 1) a = a.slice(1, -1);
      const q = m.groups!.q!.trim().replace(/^`+|`+$/g, '');
      return q && a.trim() ? [{ question: q, answer: a.trim() }] : [];
    });
    if (pairs.length) {
      pairs.forEach((p, k) =>
        out.push(p, ...variants(p, outside, EXAMPLE_VARIANTS, seed, doc.name, 'variant', out.length, k)),
      );
      continue;
    }
    const lines = text.split('\n').map((l) => l.replace(MARKER, '').replace(/^\s*>\s*/, ''));
    const arrows = lines.filter((l) => ARROW.test(l));
    if (arrows.length) {
      for (const l of arrows) {
        const [q, ...a] = l.split(ARROW);
        if (unquote(q!).length >= 2 && unquote(a.join(' ')))
          out.push({ question: unquote(q!), answer: unquote(a.join(' ')) });
      }
      continue;
    }
    const asked = lines.filter((l) => ASKED.test(l)).map((l) => l.replace(ASKED, ''));
    const raw = text.split('\n');
    const picked = asked.length
      ? asked
      : raw.filter((l) => MARKER.test(l) || /^\s*>/.test(l)).map((l) => l.replace(MARKER, '').replace(/^\s*>\s*/, ''));
    for (const q of picked.map(unquote)) if (q.length >= 2) out.push({ question: q });
  }
  return out;
}

export const CLOZE = [
  'What does the "{heading}" section of {name} say?',
  'Recite the "{heading}" part of {name}.',
  'Quote {name}\'s section "{heading}".',
] as const;

const fill = (t: string, v: Record<string, string>) => t.replace(/\{(\w+)\}/g, (m, k: string) => v[k] ?? m);

/** Sections recall practice asks about: the answerable ones but the Examples (reciting an example's
 * items teaches the adapter to repeat them; the `examples` source practises their use). */
function recallable(doc: SkillDoc): DocSection[] {
  return answerable(doc.text, sections(doc.text)).filter((s) => sectionKind(s.heading) !== 'examples');
}

/** One question per answerable section, answered with its text (so recall reaches every section). */
export function cloze(doc: SkillDoc, maxChars = 1200): Drafted[] {
  return recallable(doc).map((s, k) => ({
    question: fill(CLOZE[k % CLOZE.length]!, { heading: s.heading, name: doc.name }),
    answer: cleanAnswer(body(doc.text, s), maxChars),
  }));
}

// The practice half of template.py's phrasings (the eval's real-skill tasks ask the other half).
const TEMPLATE: Record<string, string> = {
  about: 'What is {name} for?',
  when_to_use: 'In which situations does the {name} skill apply?',
  when_not_to_use: 'In which cases is {name} the wrong choice?',
  steps: 'Walk me through {name}, step by step.',
  examples: 'Can you give examples of using {name}?',
  pitfalls: 'What mistakes should I avoid when applying {name}?',
  constraints: 'Which constraints must I respect with {name}?',
  other: 'Explain the "{heading}" part of {name}.',
};

export function template(doc: SkillDoc, maxChars = 1000): Drafted[] {
  const out: Drafted[] = doc.description
    ? [{ question: fill(TEMPLATE.about!, { name: doc.name }), answer: doc.description }]
    : [];
  for (const s of recallable(doc))
    out.push({
      question: fill(TEMPLATE[sectionKind(s.heading)]!, { name: doc.name, heading: s.heading }),
      answer: cleanAnswer(body(doc.text, s), maxChars),
    });
  return out;
}

// Slot values: nouns and numbers of the skill's own text, and a generic lexicon (none of it a
// generator's slot format or nouns: docs/distill.md "Practice").
export const LEXICON = {
  nouns: [
    'booking',
    'customer',
    'draft',
    'meeting',
    'message',
    'payment',
    'profile',
    'project',
    'reminder',
    'schedule',
    'supplier',
    'summary',
    'transfer',
    'review',
    'dataset',
    'listing',
  ],
  people: ['Dana', 'Ravi', 'Mei', 'Omar', 'Lena', 'Tomas', 'Aiko', 'Bruno'],
  when: ['this morning', 'last week', 'Friday', 'yesterday', 'the night shift', 'the weekend'],
  names: ['Maple', 'Harbor', 'Orion', 'Juniper', 'Delta', 'Willow'],
} as const;

const STOP = new Set(
  'skill skills following same answer answers request requests user users section sections first other next most more only whole result results rules rule reply replies time way case example examples step steps thing things name text line lines word words list part parts below above end start'.split(
    ' ',
  ),
);

/** Nouns (words after an article or determiner) and numbers of the text, in order, without repeats. */
export function slotsOf(text: string): { nouns: string[]; numbers: string[] } {
  const nouns = [...text.matchAll(/\b(?:a|an|the|each|every|any|this|that|your|its)\s+([A-Za-z]{4,14})\b/gi)]
    .map((m) => m[1]!.toLowerCase())
    .filter((w) => !STOP.has(w));
  const numbers = text.match(/\d+/g) ?? [];
  return { nouns: [...new Set(nouns)].slice(0, 24), numbers: [...new Set(numbers)].slice(0, 12) };
}

const SLOT_FORMS = [
  'the {noun} for {person}',
  '{num} {noun}s',
  'the {noun} {code}',
  'the {noun} from {when}',
  "{person}'s {noun}",
  'the {noun} called "{title}"',
  'the {noun} #{id}',
  'the {noun} with id {id}',
] as const;

function slot(doc: SkillDoc, lex: { nouns: string[]; numbers: string[] }, seed: number, i: number): string {
  const key = [seed, doc.name, 'slot', i] as const;
  const nouns = [...new Set([...lex.nouns, ...LEXICON.nouns])];
  const num =
    lex.numbers.length && hash(...key, 'd') % 3 === 0
      ? pick(lex.numbers, ...key, 'm')
      : String(2 + (hash(...key, 'v') % 498));
  return fill(pick(SLOT_FORMS, ...key, 'f'), {
    noun: pick(nouns, ...key, 'n'),
    num,
    code: `${'ABCDEFGHJKLMNPRSTVWXYZ'[hash(...key, 'c') % 22]}-${num}`,
    id:
      lex.numbers.length && hash(...key, 'e') % 3 === 0
        ? pick(lex.numbers, ...key, 'i')
        : String(1000 + (hash(...key, 'x') % 9000)),
    person: pick(LEXICON.people, ...key, 'p'),
    when: pick(LEXICON.when, ...key, 'w'),
    title: pick(LEXICON.names, ...key, 't'),
  });
}

// {T}: the topic as a sentence; {t}: mid-sentence; {s}, {s2}: slot values.
export const FRAMES = [
  '{T}. Here is {s}: what do I do?',
  'About {s}: {t}. Can you take care of it?',
  'Please handle {s}. ({T}.)',
  'Can you help with {s}? {T}.',
  '{T} - what does that mean for {s}?',
  'I have {s}. Use {name} on it.',
  'What should happen with {s}?',
  'Process {s} for me, please.',
  'Check {s} and tell me the result.',
  'Record {s} and {s2}.',
] as const;

const CALL = /\b([A-Za-z_][\w.-]*)\(\s*([A-Za-z_]\w*)\s*=/g;

/** A section's topics: its list items, else its sentences, as plain text of 3 to 25 words. */
function topics(text: string): string[] {
  const items = text.split('\n').filter((l) => /^\s*(?:[-*+]|\d+[.)])\s+/.test(l));
  const raw = items.length
    ? items.map((l) => l.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, ''))
    : text.replace(/```[\s\S]*?```/g, ' ').split(/(?<=[.!?])\s+/);
  return raw
    .map((t) =>
      t
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[*_`#>]+/g, '')
        .replace(/\s+/g, ' ')
        .trim()
        .replace(/[.!?:;,]+$/, ''),
    )
    .filter((t) => {
      const n = t.split(' ').length;
      return n >= 3 && n <= 25;
    });
}

interface Unit {
  readonly key: string;
  readonly topics: readonly string[];
}

/** Requests that use the skill, one section after another (the description first), each with fresh
 * slot values; the teacher answers them with the skill in context. */
export function requests(doc: SkillDoc, n: number, seed = 0): Drafted[] {
  const lex = slotsOf(withoutExamples(doc.text)); // an example's items are the examples source's
  const all = sections(doc.text);
  const units: Unit[] = [];
  if (doc.description) units.push({ key: 'description', topics: topics(doc.description) });
  for (const s of all as DocSection[]) {
    if (sectionKind(s.heading) === 'examples') continue; // its requests are the `examples` source
    const own = body(doc.text, s, true);
    const found = topics(own);
    const tools = [...own.matchAll(CALL)].map((m) => `I need the ${m[1]} result`);
    if (found.length || tools.length || own.trim()) units.push({ key: s.heading, topics: [...found, ...tools] });
  }
  if (!units.length) return [];
  const out: Drafted[] = [];
  const seen = new Set<string>();
  for (let i = 0; out.length < n && i < n * 6; i++) {
    const unit = units[i % units.length]!;
    const frames = unit.topics.length ? FRAMES : FRAMES.slice(5);
    const topic = unit.topics.length ? pick(unit.topics, seed, doc.name, 'topic', i) : '';
    const q = fill(pick(frames, seed, doc.name, 'frame', i), {
      T: topic.charAt(0).toUpperCase() + topic.slice(1),
      t: /^[A-Z][a-z]/.test(topic) ? topic.charAt(0).toLowerCase() + topic.slice(1) : topic,
      s: slot(doc, lex, seed, 2 * i),
      s2: slot(doc, lex, seed, 2 * i + 1),
      name: doc.name,
    });
    if (!seen.has(q)) {
      seen.add(q);
      out.push({ question: q });
    }
  }
  return out;
}
