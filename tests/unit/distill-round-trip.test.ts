// Tool round-trip practice against the case file the Python practice also runs
// (tests/fixtures/practice-cases.json "round_trip", written by training/tests/practice_cases.py), and the
// studio's rules around it: the follow-up is a chat the wire schema and a chat template accept.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PracticeQuestionSchema } from '../../common/api/adapter-schemas';
import { STUDIO_SOURCES, type PracticeQuestion, type PracticeSource } from '../../common/distill/practice';
import type { PracticeTurn } from '../../common/distill/practice-synth';
import {
  CAP,
  detectCall,
  followUps,
  MAX_CALL_CHARS,
  namesTool,
  pyDumps,
  RESULT_LEXICON,
  resultText,
  SHAPES,
  SOURCE,
} from '../../common/distill/round-trip';
import { ChatTemplate } from '../../main/engine/chat';

interface Said {
  messages: PracticeTurn[];
  source: PracticeSource;
  answer: string;
}
const rt = (
  JSON.parse(readFileSync(join(process.cwd(), 'tests/fixtures/practice-cases.json'), 'utf8')) as {
    round_trip: {
      source: string;
      cap: number;
      max_call_chars: number;
      lexicon: Record<string, string[]>;
      shapes: string[];
      detect: { answer: string; call: { name: string; args: string } | null }[];
      names_tool: { skill: string; name: string; names: boolean }[];
      result_text: { key: (string | number)[]; text: string }[];
      follow_ups: { skill: string; seed: number; cap: number; said: Said[]; expect: PracticeQuestion[] }[];
    };
  }
).round_trip;

const asked = (s: Said): PracticeQuestion => ({
  question: s.messages.at(-1)!.content,
  source: s.source,
  messages: s.messages,
});

describe('round trip (shared cases)', () => {
  it('names the same source, limits, lexicon and shapes', () => {
    expect([SOURCE, CAP, MAX_CALL_CHARS]).toEqual([rt.source, rt.cap, rt.max_call_chars]);
    expect(Object.fromEntries(Object.entries(RESULT_LEXICON).map(([k, v]) => [k, [...v]]))).toEqual(rt.lexicon);
    expect([...SHAPES]).toEqual(rt.shapes);
    expect(STUDIO_SOURCES).toContain(SOURCE);
  });

  it.each(rt.detect.map((c) => [JSON.stringify(c.answer.slice(0, 40)), c] as const))('detects %s', (_n, c) => {
    expect(detectCall(c.answer)).toEqual(c.call);
  });

  it('names tools and writes results as Python does', () => {
    expect(rt.names_tool.map((c) => namesTool(c.skill, c.name))).toEqual(rt.names_tool.map((c) => c.names));
    expect(rt.names_tool.some((c) => c.names) && rt.names_tool.some((c) => !c.names)).toBe(true);
    expect(rt.result_text.map((c) => resultText(...c.key))).toEqual(rt.result_text.map((c) => c.text));
    expect(new Set(rt.result_text.map((c) => Object.keys(JSON.parse(c.text) as object).join())).size).toBe(5);
  });

  it.each(rt.follow_ups.map((c) => [`seed ${c.seed}, cap ${c.cap}`, c] as const))('follow-ups, %s', (_n, c) => {
    const got = followUps(
      c.said.map((s) => [asked(s), s.answer] as const),
      c.seed,
      c.skill,
      c.cap,
    );
    expect(got).toEqual(c.expect);
    expect(got.length).toBeGreaterThan(0);
  });
});

describe('round trip rules', () => {
  const c = rt.follow_ups[0]!;
  const got = followUps(
    c.said.map((s) => [asked(s), s.answer] as const),
    c.seed,
    c.skill,
  );

  it('follows a single-turn question given without messages the same way', () => {
    const plain = c.said.map((s) => {
      const q = asked(s);
      return [s.messages.length === 1 ? { question: q.question, source: q.source } : q, s.answer] as const;
    });
    expect(followUps(plain, c.seed, c.skill)).toEqual(got);
  });

  it('gives questions the wire schema accepts, ending on the tool turn', () => {
    for (const q of got) {
      expect(PracticeQuestionSchema.safeParse(q).success).toBe(true);
      expect(q.messages!.map((m) => m.role).slice(-3)).toEqual(['user', 'assistant', 'tool']);
      expect(q.question).toBe(q.messages!.at(-1)!.content);
    }
  });

  it('renders in a chat template after the tool turn', () => {
    const t = new ChatTemplate(
      "{%- for m in messages -%}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}{%- endfor -%}{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}",
      {},
    );
    const text = t.render([{ role: 'system', content: 'skill' }, ...got[0]!.messages!]);
    expect(text).toContain(`<|im_start|>tool\n${got[0]!.question}<|im_end|>\n<|im_start|>assistant\n`);
  });

  it("writes JSON with Python's separators and escapes", () => {
    expect(pyDumps({ a: [1, 'é', true, null], b: {} })).toBe('{"a": [1, "\\u00e9", true, null], "b": {}}');
    expect(pyDumps({ a: 'é\n' }, false)).toBe('{"a": "é\\n"}');
  });
});
