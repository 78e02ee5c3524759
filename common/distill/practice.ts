// Practice questions for distilling a skill, only from what a person has (docs/distill.md "Practice"):
// the skill's tests, its Examples, trajectories that used it, questions typed in the practice panel,
// requests synthesized from every section, requests the teacher (or a configured endpoint) writes,
// one cloze per section and the template questions about it; then follow-ups to the teacher's tool calls
// (`round_trip`, round-trip.ts: made from the teacher's answers, so not here). The same sources, names
// and rules as training/src/pskills_train/distill/practice.py; tests/fixtures/practice-cases.json pins both.
import {
  cloze,
  examples,
  requests,
  template,
  testVariants,
  TEST_VARIANTS,
  type Drafted,
  type PracticeTurn,
} from './practice-synth';
import { body, hash, normalise, sectionKind, sections, withoutExamples, type SkillDoc } from './practice-text';

export const SOURCES = [
  'tests',
  'examples',
  'trajectories',
  'user',
  'requests',
  'self_written',
  'cloze',
  'template',
  'round_trip',
] as const;
export type PracticeSource = (typeof SOURCES)[number];
/** What the person wrote or ran; the rest is made from the skill's text. */
export const OWNED: readonly PracticeSource[] = ['tests', 'examples', 'trajectories', 'user'];
/** The studio's sources, in the order gather interleaves them: the recipe's (training/configs/distill.json;
 * no `template`: a second recall question per section taught the adapter to recite, docs/distill.md). */
export const STUDIO_SOURCES: readonly PracticeSource[] = [
  'tests',
  'examples',
  'requests',
  'self_written',
  'cloze',
  'round_trip',
];
/** A skill without tests practises on at least this many questions from its other sources. */
export const MIN_QUESTIONS = 32;
/** One test in HOLD_OUT_EVERY is kept out of practice to judge the adapter (none below that many). */
export const HOLD_OUT_EVERY = 4;
/** The count of the tests' copies (TEST_VARIANTS each, numbers redrawn) in `counts`. */
export const REDRAWN = 'tests_redrawn';

export interface PracticeQuestion {
  /** The request the answer follows: the last turn of `messages` when those are given. */
  readonly question: string;
  readonly source: PracticeSource;
  /** An answer to teacher-force (one the verifier passed); absent: the teacher answers greedily. */
  readonly answer?: string;
  /** The chat before the answer, when it is more than one user turn (a test written as messages). */
  readonly messages?: PracticeTurn[];
  /** A copy of a test with its numbers redrawn (counted apart, as `REDRAWN`). */
  readonly redrawn?: true;
}

/** A test as practice reads it: a prompt, or the chat messages before the answer. */
export interface TestRow {
  readonly id: string;
  readonly prompt?: string;
  readonly messages?: readonly { readonly role: string; readonly content: string }[];
}

/** The chat a question is asked in, without the skill: its messages, or its one user turn. */
export function chatOf(q: Pick<PracticeQuestion, 'question' | 'messages'>): readonly PracticeTurn[] {
  return q.messages ?? [{ role: 'user', content: q.question }];
}

/** A test row as a drafted question; a chat that ends on an answer, or has none, asks nothing. */
function fromTest(t: TestRow): Drafted[] {
  if (t.prompt !== undefined) return t.prompt.trim() ? [{ question: t.prompt }] : [];
  const msgs = (t.messages ?? []).filter((m): m is PracticeTurn => ['user', 'assistant', 'tool'].includes(m.role));
  const last = msgs.at(-1);
  if (!last || last.role === 'assistant' || !last.content.trim()) return [];
  return msgs.length === 1 && last.role === 'user'
    ? [{ question: last.content }]
    : [{ question: last.content, messages: msgs.map((m) => ({ role: m.role, content: m.content })) }];
}

/** Tests split into the practised and the held out: a seeded 1 in `every`, none below `every` tests. */
export function splitTests<T extends TestRow>(
  tests: readonly T[],
  seed = 0,
  every = HOLD_OUT_EVERY,
): { practised: T[]; heldOut: T[] } {
  if (tests.length < every) return { practised: [...tests], heldOut: [] };
  const order = tests.map((t, i) => ({ i, h: hash(seed, 'holdout', t.id) })).sort((a, b) => a.h - b.h || a.i - b.i);
  const out = new Set(order.slice(0, Math.floor(tests.length / every)).map((o) => o.i));
  return { practised: tests.filter((_, i) => !out.has(i)), heldOut: tests.filter((_, i) => out.has(i)) };
}

/** The ids of the tests `questions` asks as tests: what a run practised on (a test the limit or the
 * panel left out was not practised, and is judged as held out). */
export function practisedTests(tests: readonly TestRow[], questions: readonly PracticeQuestion[]): string[] {
  const asked = new Set(questions.filter((q) => q.source === 'tests').map((q) => q.question));
  return tests.filter((t) => fromTest(t).some((d) => asked.has(d.question))).map((t) => t.id);
}

/** The pass rate on the tests a distilled adapter did not practise on (docs/distill.md "Practice"). */
export function heldOutRate(results: readonly { passed: boolean; practised?: boolean }[]) {
  const held = results.filter((r) => !r.practised);
  const passed = held.filter((r) => r.passed).length;
  const nPractised = results.length - held.length;
  if (held.length === 0)
    return {
      n: 0,
      passed: 0,
      passRate: null,
      note: `the adapter practised on all ${nPractised} tests (fewer than 4: none held out), so the pass rate is on practised tests`,
    };
  return {
    n: held.length,
    passed,
    passRate: passed / held.length,
    note: `${passed} of ${held.length} held-out tests passed; ${nPractised} practised tests are marked`,
  };
}

// ---- self-written requests -------------------------------------------------------------------------

export const WRITE_PROMPT =
  'Write {n} different requests that a user of this skill might send{about}. Vary the details (names, numbers, items) and the wording. Write only the requests, one per line, with no numbering and no answers.';
export const WRITE_PER_PROMPT = 4;
const WRITE_PROMPTS = 8;
/** Tokens a writer reply may take: four requests. */
export const WRITE_TOKENS = 192;
/** How the teacher samples a reply, prompt i with seed i (HF's processors in that order, then a
 * mulberry32 draw: main/engine/logits-processors.ts, sampler.ts). Greedy, a small base writes one
 * request under every prompt, and the filter drops the copies as duplicates. */
export const WRITE_SAMPLING = { temperature: 0.8, topP: 0.95, repetitionPenalty: 1.1 } as const;

/** The prompts the writer answers, with the skill (as practice may see it) as the system message:
 * one general, then one per section heading, up to WRITE_PROMPTS. */
export function writePrompts(headings: readonly string[]): string[] {
  const abouts = ['', ...headings.map((h) => ` about "${h}"`)].slice(0, WRITE_PROMPTS);
  return abouts.map((about) => WRITE_PROMPT.replace('{n}', String(WRITE_PER_PROMPT)).replace('{about}', about));
}

/** The headings a writer is asked about: each section with text of its own, but the Examples. */
export function writeHeadings(skillText: string): string[] {
  const text = normalise(skillText);
  return sections(text)
    .filter((s) => sectionKind(s.heading) !== 'examples' && body(text, s, true).trim())
    .map((s) => s.heading);
}

export interface Dropped {
  empty: number;
  duplicate: number;
  copy: number;
}

// Spelled out, as Python's `\s`, `\d` and str.strip differ from JavaScript's at the edges (U+0085,
// U+FEFF, other scripts' digits): the filter must read a line the same in both.
const WS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';
const SPACES = new RegExp(`${WS}+`, 'g');
const EDGES = new RegExp(`^${WS}+|${WS}+$`, 'g');
// A bullet `*` but not the first of a bold `**Request:**` label.
const NUMBERING = new RegExp(`^${WS}*(?:[-+•]|\\*(?!\\*)|[0-9]+[.):])${WS}*`);
const LABEL = new RegExp(`^${WS}*(?:\\*\\*)?(?:request|user|q)(?:\\*\\*)?${WS}*:(?:\\*\\*)?${WS}*`, 'i');
const QUOTES = /^["“'`]+|["”'`]+$/g;
const trim = (s: string) => s.replace(EDGES, '');
/** Characters, as Python counts them (code points, not UTF-16 units). */
const chars = (s: string) => [...s].length;

const key = (s: string) => trim(s.toLowerCase().replace(SPACES, ' ')).replace(/[.!?]+$/, '');

/** A request that repeats this many words of the skill in a row copies it. */
export const COPY_WORDS = 4;

function copies(k: string, grams: ReadonlySet<string>): boolean {
  const w = k.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  for (let i = 0; i + COPY_WORDS <= w.length; i++) if (grams.has(w.slice(i, i + COPY_WORDS).join(' '))) return true;
  return false;
}

/** Requests out of a writer's replies: one a line, numbering, labels and quotes off; empties,
 * duplicates and copies of the skill's own sentences dropped and counted. */
export function filterWritten(
  replies: readonly string[],
  skillText: string,
  seen: Set<string> = new Set(),
): { kept: string[]; dropped: Dropped } {
  const dropped: Dropped = { empty: 0, duplicate: 0, copy: 0 };
  const skill = key(normalise(skillText).replace(/[*_`#>]+/g, ''));
  const words = skill.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const grams = new Set(words.slice(0, -3).map((_, i) => words.slice(i, i + COPY_WORDS).join(' ')));
  const kept: string[] = [];
  for (const line of replies.flatMap((r) => r.split('\n'))) {
    const q = trim(line.replace(NUMBERING, '').replace(LABEL, '').replace(QUOTES, ''));
    const k = key(q);
    if (chars(k) < 3 || chars(k) > 600) dropped.empty++;
    else if (seen.has(k)) dropped.duplicate++;
    else if ((chars(k) >= 12 && skill.includes(k)) || copies(k, grams)) dropped.copy++;
    else {
      seen.add(k);
      kept.push(q);
    }
  }
  return { kept, dropped };
}

// ---- gather ---------------------------------------------------------------------------------------

export interface GatherInput {
  readonly skill: SkillDoc;
  readonly sources: readonly PracticeSource[];
  readonly tests?: readonly TestRow[];
  readonly trajectories?: readonly Drafted[];
  readonly user?: readonly string[];
  /** Self-written requests (already filtered); absent: the source gave none. */
  readonly written?: readonly string[];
  readonly nRequests?: number;
  readonly seed?: number;
  readonly limit?: number | null;
  readonly ownedShare?: number;
}

export class NoPractice extends Error {}

/** What the skill practises on: each source's questions, the person's own first (up to `ownedShare`
 * of `limit`), then the made ones, each group round-robin over its sources. Without Examples in
 * `sources`, nothing is taken from the Examples (not requests, cloze, template nor slot values). */
export function gather(input: GatherInput): { questions: PracticeQuestion[]; counts: Record<string, number> } {
  const { sources, seed = 0, limit = null, ownedShare = 0.75 } = input;
  const unknown = sources.filter((s) => !(SOURCES as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`unknown practice sources ${unknown.join(', ')}; known: ${SOURCES.join(', ')}`);
  const text = normalise(input.skill.text);
  const seen = sources.includes('examples')
    ? { ...input.skill, text }
    : { ...input.skill, text: withoutExamples(text) };
  const has = (s: PracticeSource) => sources.includes(s);
  const tests = has('tests') ? (input.tests ?? []).flatMap(fromTest) : [];
  const made: Record<PracticeSource, Drafted[]> = {
    tests: [...tests, ...testVariants(tests, TEST_VARIANTS, seed)],
    examples: has('examples') ? examples(seen, seed) : [],
    trajectories: has('trajectories') ? [...(input.trajectories ?? [])] : [],
    user: has('user') ? (input.user ?? []).map((q) => ({ question: q })) : [],
    requests: [],
    self_written: has('self_written') ? (input.written ?? []).map((q) => ({ question: q })) : [],
    cloze: has('cloze') ? cloze(seen) : [],
    template: has('template') ? template(seen) : [],
    round_trip: [], // follows the teacher's answers: the engine adds it after the teacher pass
  };
  if (has('requests')) {
    // No tests: the made sources reach MIN_QUESTIONS, requests filling what the others leave.
    const others = SOURCES.filter((s) => s !== 'requests').reduce((n, s) => n + made[s].length, 0);
    const need = made.tests.length ? 0 : MIN_QUESTIONS - others;
    made.requests = requests(seen, Math.max(input.nRequests ?? 24, need), seed);
  }
  const tried = SOURCES.filter((s) => has(s) && s !== 'round_trip');
  if (tried.every((s) => made[s].length === 0))
    throw new NoPractice(
      `${input.skill.name}: no usable practice question; tried ${tried.map((s) => `${s} (none)`).join(', ')}` +
        ' (add tests, an Examples section with Request:/Reply: pairs, or sections with text)',
    );
  const tag = (s: PracticeSource) =>
    made[s].map(
      (d, i) =>
        ({ ...d, source: s, ...(s === 'tests' && i >= tests.length ? { redrawn: true } : {}) }) as PracticeQuestion,
    );
  const owned = roundRobin(OWNED.filter(has).map(tag));
  const synth = roundRobin(SOURCES.filter((s) => has(s) && !OWNED.includes(s)).map(tag));
  const deduped = (qs: PracticeQuestion[]) => {
    const keys = new Set<string>();
    return qs.filter((q) => (keys.has(q.question) ? false : (keys.add(q.question), true)));
  };
  let questions: PracticeQuestion[];
  if (limit === null) questions = deduped([...owned, ...synth]);
  else {
    const nOwned = Math.min(owned.length, Math.max(limit - synth.length, Math.round(limit * ownedShare)));
    questions = deduped([...owned.slice(0, nOwned), ...synth.slice(0, limit - nOwned)]);
  }
  return { questions, counts: sourceCounts(questions) };
}

/** Questions per source, as a distilled adapter's recipe records them: a test's copies apart (`REDRAWN`). */
export function sourceCounts(questions: readonly PracticeQuestion[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const q of questions) {
    const k = q.redrawn ? REDRAWN : q.source;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return counts;
}

/** The practice a skill's text and tests give without a writer (no self-written requests). */
export function textPractice(skill: SkillDoc, tests: readonly TestRow[] = []): PracticeQuestion[] {
  return gather({ skill, sources: STUDIO_SOURCES.filter((s) => s !== 'self_written'), tests }).questions;
}

function roundRobin(per: PracticeQuestion[][]): PracticeQuestion[] {
  const out: PracticeQuestion[] = [];
  for (let i = 0; i < Math.max(0, ...per.map((p) => p.length)); i++)
    for (const p of per) if (i < p.length) out.push(p[i]!);
  return out;
}

export type { SkillDoc } from './practice-text';
