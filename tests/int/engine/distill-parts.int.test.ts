// Several skills into one adapter on the tiny train-step fixture: each part's teacher rows are its own
// skill's (the same as that skill's teacher pass alone), and the steps run over all of them together,
// exactly as distillRows over the concatenated rows; through the engine worker as in this thread.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PracticeQuestion } from '../../../common/distill/practice';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { distillRows } from '../../../main/engine/distill';
import { teacherRows } from '../../../main/engine/distill-teacher';
import { distillParts } from '../../../main/engine/distill-parts';
import { EngineWorker } from '../../../main/engine/engine-client';
import { APP_ROOT } from '../../../main/paths';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const q = (question: string): PracticeQuestion => ({ question, source: 'tests' });
const PARTS = [
  { skill: '# Greeting\n\nAlways answer with the word tests.', questions: [q('hi'), q('go')] },
  { skill: '# Farewell\n\nSay bye, then stop.', questions: [q('ok'), q('so')] },
];
const OPTIONS = { steps: 4, lr: 1e-2, seed: 3, maxAnswerTokens: 4 };

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(DIR);
});
afterAll(async () => bundle.dispose());

const factors = (a: { targets: ReadonlyMap<string, { A: Float32Array; B: Float32Array }> }) =>
  [...a.targets].map(([k, p]) => [k, Array.from(p.A), Array.from(p.B)]);

describe('distillParts', () => {
  it("each part's rows are taught with its own skill; the steps are distillRows over all the rows", async () => {
    const own = await Promise.all(PARTS.map((p) => teacherRows(bundle, p.skill, p.questions, OPTIONS)));
    const swapped = await teacherRows(bundle, PARTS[1]!.skill, PARTS[0]!.questions, OPTIONS);
    // The fixture's teacher answers differently with the other skill in context, so the check can fail.
    expect(swapped.map((r) => Array.from(r.topLogp))).not.toEqual(own[0]!.map((r) => Array.from(r.topLogp)));

    const got = await distillParts(bundle, PARTS, OPTIONS);
    const want = await distillRows(bundle, own.flat(), OPTIONS);
    expect(got.rows).toBe(own.flat().length);
    expect(got.losses).toEqual(want.losses);
    expect(factors(got.adapter)).toEqual(factors(want.adapter));
  });

  it('the engine worker runs the same', async () => {
    const worker = new EngineWorker();
    try {
      const off = await worker.distillParts(bundle, 'parts', PARTS, OPTIONS);
      const here = await distillParts(bundle, PARTS, OPTIONS);
      expect(off.losses).toEqual(here.losses);
      expect(factors(off.adapter)).toEqual(factors(here.adapter));
    } finally {
      await worker.dispose();
    }
  });
});
