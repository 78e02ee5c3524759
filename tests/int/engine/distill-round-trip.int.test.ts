// Tool round-trip practice in the engine (docs/distill.md "Practice"), on the tiny train-step fixture with a
// 2×128 bucket added (a follow-up is longer than the fixture's 16 tokens): a forced answer that calls a
// tool the skill names gets a follow-up question, answered by the teacher into a row of its own; a call to
// a tool the skill does not name gets none; rows map back to their questions when a question makes no row.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PracticeQuestion } from '../../../common/distill/practice';
import { followUps } from '../../../common/distill/round-trip';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { distillParts, partRows } from '../../../main/engine/distill-parts';
import { EngineWorker } from '../../../main/engine/engine-client';
import { withLongBucket } from './fixture';

const SKILL = '# Bookings\n\nUse find_booking(who) to look up a guest by name.';
const CALL = 'find_booking(who="Dana")';
const QUESTIONS: PracticeQuestion[] = [
  // Longer than the largest bucket: no row, so no follow-up, though its answer calls the named tool.
  { question: 'word '.repeat(70).trim(), source: 'tests', answer: 'find_booking(who="Ann")' },
  { question: 'find Dana', source: 'examples', answer: CALL },
  { question: 'find Mei', source: 'examples', answer: 'lookup_codeword(w="Mei")' },
];
const PARTS = [{ skill: SKILL, questions: QUESTIONS }];
const OPTIONS = { steps: 2, lr: 1e-2, seed: 3, maxAnswerTokens: 24 };

let dir: string;
let bundle: Bundle;
beforeAll(async () => {
  dir = withLongBucket();
  bundle = await loadBundle(dir);
});
afterAll(async () => {
  await bundle.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('round trip in the engine', () => {
  it('follows only the call of a named tool, with a row of its own after the tool turn', async () => {
    const off = await partRows(bundle, PARTS[0]!, OPTIONS);
    expect(off.added).toEqual([]);
    // The long question makes no row; each row names its question, so the call is followed from "find Dana".
    expect(off.rows.map((r) => [r.question, r.said])).toEqual([
      [1, CALL],
      [2, 'lookup_codeword(w="Mei")'],
    ]);

    const on = await partRows(bundle, PARTS[0]!, { ...OPTIONS, roundTrip: true });
    expect(on.added).toEqual(followUps([[QUESTIONS[1]!, CALL]], 3, SKILL));
    expect(on.added).toHaveLength(1);
    const [trip] = on.added;
    expect(trip!.source).toBe('round_trip');
    expect(trip!.messages!.map((m) => [m.role, m.role === 'tool' ? 'result' : m.content])).toEqual([
      ['user', 'find Dana'],
      ['assistant', CALL],
      ['tool', 'result'],
    ]);
    expect(on.rows).toHaveLength(off.rows.length + 1);
    const row = on.rows.at(-1)!;
    // The student sees the whole chat, the tool turn last, and learns the teacher's answer after it.
    expect(row.ids.slice(0, row.answerFrom + 1)).toEqual(bundle.tokenizer.encode(bundle.chat.render(trip!.messages!)));
    expect(row.ids.length).toBeGreaterThan(16);
    expect(row.topIds.length).toBeGreaterThan(0);
  });

  it('a run counts the follow-up, trains on its row, and the engine worker gives the same', async () => {
    const plain = await distillParts(bundle, PARTS, OPTIONS);
    const here = await distillParts(bundle, PARTS, { ...OPTIONS, roundTrip: true });
    expect(plain.added).toEqual([]);
    expect(here.added!.map((q) => q.source)).toEqual(['round_trip']);
    expect(here.rows).toBe(plain.rows + 1);
    expect(here.losses.every(Number.isFinite)).toBe(true);
    const worker = new EngineWorker();
    try {
      const off = await worker.distillParts(bundle, 'round-trip', PARTS, { ...OPTIONS, roundTrip: true });
      expect(off.added).toEqual(here.added);
      expect(off.losses).toEqual(here.losses);
    } finally {
      await worker.dispose();
    }
  });
});
