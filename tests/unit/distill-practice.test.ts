// Practice against the case file the Python practice also runs (tests/fixtures/practice-cases.json,
// written by training/tests/practice_cases.py), and the studio's rules around it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  filterWritten,
  gather,
  heldOutRate,
  HOLD_OUT_EVERY,
  MIN_QUESTIONS,
  NoPractice,
  OWNED,
  SOURCES,
  splitTests,
  WRITE_PROMPT,
  writePrompts,
  type PracticeSource,
} from '../../common/distill/practice';
import {
  CLOZE,
  EXAMPLE_VARIANTS,
  examples,
  FRAMES,
  LEXICON,
  requests,
  TEST_VARIANTS,
  testVariants,
} from '../../common/distill/practice-synth';
import { exampleNumbers, hash, parrots } from '../../common/distill/practice-text';

interface Case {
  path: string;
  name: string;
  description: string;
  text: string;
  sources: PracticeSource[];
  tests: { id: string; prompt?: string; messages?: { role: string; content: string }[] }[];
  written: string[] | null;
  seed: number;
  limit: number | null;
  expect: { questions: { question: string; source: string; answer?: string }[]; counts: Record<string, number> };
}
const doc = JSON.parse(readFileSync(join(process.cwd(), 'tests/fixtures/practice-cases.json'), 'utf8')) as {
  sources: string[];
  owned: string[];
  min_questions: number;
  hold_out_every: number;
  cloze: string[];
  write_prompt: string;
  write_prompts: string[];
  frames: string[];
  lexicon: Record<string, string[]>;
  hash: { parts: (string | number)[]; value: number }[];
  written: { skill: string; replies: string[]; kept: string[]; dropped: Record<string, number> };
  holdout: { tests: { id: string; prompt: string }[]; seed: number; held_out: string[] }[];
  cases: Case[];
  round_trip: { source: string };
  parrots: { skill: string; example_numbers: string[]; answers: { answer: string; asked: string; parrots: boolean }[] };
};

function run(c: Case) {
  const written = c.written === null ? undefined : filterWritten(c.written, c.text).kept;
  return gather({
    skill: { name: c.name, description: c.description, text: c.text },
    sources: c.sources,
    tests: c.tests,
    ...(written ? { written } : {}),
    seed: c.seed,
    limit: c.limit,
  });
}

describe('practice (shared cases)', () => {
  it('names the same sources, wordings, lexicon and hash', () => {
    // Python's gather sources, then round_trip (made from the teacher's answers, round_trip.py).
    expect([...SOURCES]).toEqual([...doc.sources, doc.round_trip.source]);
    expect([...OWNED]).toEqual(doc.owned);
    expect(MIN_QUESTIONS).toBe(doc.min_questions);
    expect(HOLD_OUT_EVERY).toBe(doc.hold_out_every);
    expect([...CLOZE]).toEqual(doc.cloze);
    expect(WRITE_PROMPT).toBe(doc.write_prompt);
    expect(writePrompts(['When to use', 'Steps'])).toEqual(doc.write_prompts);
    expect([...FRAMES]).toEqual(doc.frames);
    expect(Object.fromEntries(Object.entries(LEXICON).map(([k, v]) => [k, [...v]]))).toEqual(doc.lexicon);
    for (const h of doc.hash) expect(hash(...h.parts)).toBe(h.value);
  });

  it('finds the same parroted teacher answers', () => {
    const f = doc.parrots;
    const numbers = exampleNumbers(f.skill);
    expect([...numbers].sort()).toEqual(f.example_numbers);
    expect(f.answers.map((a) => parrots(a.answer, a.asked, numbers))).toEqual(f.answers.map((a) => a.parrots));
  });

  it('filters written requests the same way', () => {
    const got = filterWritten(doc.written.replies, doc.written.skill);
    expect(got.kept).toEqual(doc.written.kept);
    expect(got.dropped).toEqual(doc.written.dropped);
  });

  it('holds out the same tests', () => {
    for (const h of doc.holdout) expect(splitTests(h.tests, h.seed).heldOut.map((t) => t.id)).toEqual(h.held_out);
  });

  it.each(doc.cases.map((c, i) => [`${i} ${c.path} [${c.sources.join(',')}]`, c] as const))('%s', (_n, c) => {
    const got = run(c);
    expect(got.questions).toEqual(c.expect.questions);
    expect(got.counts).toEqual(c.expect.counts);
  });
});

describe('practice rules', () => {
  const ship = doc.cases.find((c) => c.path === 'ship-notes/SKILL.md')!;

  it('gives a skill without tests at least MIN_QUESTIONS questions', () => {
    for (const c of doc.cases.filter((x) => x.tests.length === 0 && x.limit === null))
      expect(run(c).questions.length).toBeGreaterThanOrEqual(MIN_QUESTIONS);
  });

  it('takes nothing from the Examples when they are not a source', () => {
    const synth = gather({ skill: ship, sources: ['requests', 'cloze', 'template'] });
    const all = JSON.stringify(synth.questions);
    expect(all).not.toContain('4411');
    expect(all).not.toContain('faster list endpoint');
    expect(synth.questions.some((q) => /Examples/.test(q.question))).toBe(false);
  });

  it('covers every section with a request and never uses a generator slot format', () => {
    const qs = requests({ ...ship, text: ship.text }, 24).map((q) => q.question);
    for (const topic of ['release notes', 'merged change', 'notes.lookup', 'internal refactors'])
      expect(qs.some((q) => q.includes(topic))).toBe(true);
    // `noun NNNN` with a generator's nouns (docs/distill.md "Practice")
    expect(qs.filter((q) => /\b(?:invoice|order|ticket|batch|badge|parcel|crate) \d{3,4}\b/.test(q))).toEqual([]);
  });

  it('keeps Examples pairs as forced answers and lesson arrows as questions with answers', () => {
    const [pair, ...copies] = examples(ship);
    expect(pair).toEqual({ question: 'Notes for ticket 4411', answer: 'api: faster list endpoint (4411)' });
    // Copies with the number the reply repeats redrawn (four digits, seeded).
    expect(copies).toHaveLength(EXAMPLE_VARIANTS);
    for (const c of copies) {
      const n = /^Notes for ticket (\d{4})$/.exec(c.question)![1]!;
      expect(n).not.toBe('4411');
      expect(c.answer).toBe(`api: faster list endpoint (${n})`);
    }
    const lesson = '# L\n\n## Examples\n\n- "Could you note down contract 9624?" → `{"a": 1}`\n- User: log it\n';
    expect(examples({ name: 'l', description: '', text: lesson })).toEqual([
      { question: 'Could you note down contract 9624?', answer: '{"a": 1}' },
    ]);
  });

  it('names every source tried when none gives a question', () => {
    expect(() =>
      gather({
        skill: { name: 'x', description: '', text: '# Only a title\n' },
        sources: ['tests', 'examples', 'cloze'],
      }),
    ).toThrow(NoPractice);
    expect(() =>
      gather({
        skill: { name: 'x', description: '', text: '# Only a title\n' },
        sources: ['tests', 'examples', 'cloze'],
      }),
    ).toThrow(/tried tests \(none\), examples \(none\), cloze \(none\)/);
  });

  it('holds out none of 3 tests and 1 in 4 of more, the same for a seed', () => {
    const t = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `id${i}`, prompt: `p${i}` }));
    expect(splitTests(t(3)).heldOut).toEqual([]);
    expect(splitTests(t(12), 5).heldOut).toHaveLength(3);
    expect(splitTests(t(12), 5)).toEqual(splitTests(t(12), 5));
    expect(splitTests(t(12), 5).heldOut).not.toEqual(splitTests(t(12), 6).heldOut);
  });

  it('reports the pass rate on held-out tests, or says it is on practised ones', () => {
    const r = (passed: boolean, practised: boolean) => ({ passed, practised });
    expect(heldOutRate([r(true, true), r(false, false), r(true, false), r(true, true)])).toMatchObject({
      n: 2,
      passed: 1,
      passRate: 0.5,
    });
    const all = heldOutRate([r(true, true), r(true, true), r(false, true)]);
    expect(all).toMatchObject({ n: 0, passRate: null });
    expect(all.note).toMatch(/pass rate is on practised tests/);
  });
});

describe('tests written as chat messages', () => {
  const skill = {
    name: 'desk',
    description: 'Desk rules.',
    text: '# Desk\n\n## Rules\n\n- Prefix the answer with `DESK:`.\n',
  };
  const chat = [
    { role: 'system', content: 'ignored: the skill is the system turn' },
    { role: 'user', content: 'Look up order 12.' },
    { role: 'assistant', content: 'lookup(order="12")' },
    { role: 'tool', content: '{"status": "shipped"}' },
  ];

  it('practise on the chat before the answer, the last turn as the question', () => {
    const { questions } = gather({ skill, sources: ['tests'], tests: [{ id: 't1', messages: chat }] });
    expect(questions).toEqual([{ question: '{"status": "shipped"}', source: 'tests', messages: chat.slice(1) }]);
  });

  it('one user turn is a plain question; a chat that ends on an answer or an empty turn asks nothing', () => {
    const tests = [
      { id: 'one', messages: [{ role: 'user', content: 'File ticket 4.' }] },
      { id: 'answered', messages: chat.slice(1, 3) },
      { id: 'empty', messages: [{ role: 'user', content: '  ' }] },
      { id: 'prompt', prompt: 'File ticket 5.' },
    ];
    const { questions } = gather({ skill, sources: ['tests'], tests });
    // Then TEST_VARIANTS copies of each with its number redrawn (a copy equal to a question kept is dropped).
    expect(questions.slice(0, 2)).toEqual([
      { question: 'File ticket 4.', source: 'tests' },
      { question: 'File ticket 5.', source: 'tests' },
    ]);
    const copies = testVariants([{ question: 'File ticket 4.' }, { question: 'File ticket 5.' }]);
    expect(copies).toHaveLength(2 * TEST_VARIANTS);
    expect(questions.map((q) => q.question)).toEqual([
      ...new Set(['File ticket 4.', 'File ticket 5.', ...copies.map((d) => d.question)]),
    ]);
    expect(questions.every((q) => /^File ticket [1-9]\.$/.test(q.question))).toBe(true);
  });
});
