// The layered train step in Node on the tiny layered fixture: two steps from parity.json's seeded batch
// and init land within 1e-5 of torch's factors (export.train_step.torch_step, written by the exporter),
// and a distillation runs end to end through it as on the whole-graph fixture (distill.int.test.ts).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PracticeQuestion } from '../../../common/distill/practice';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { distillRows, timeTrainStep } from '../../../main/engine/distill';
import { KEEP_BYTES, keepPlan } from '../../../main/engine/distill-memory';
import { teacherRows } from '../../../main/engine/distill-teacher';
import { distillSkill } from '../../../main/engine/distill-parts';
import { APP_ROOT } from '../../../main/paths';
import { parityRun, readParity, type Arr } from './layered-parity';
import { openStepRunner, stepKind, trainStepEntry, type TrainState } from '../../../main/engine/train-step';
import { runStep } from './train-batch';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-layered');
const SKILL = '# Greeting\n\nAlways answer with the word tests.';
const QUESTIONS: PracticeQuestion[] = [
  { question: 'hi', source: 'tests' },
  { question: 'go', source: 'examples' },
  { question: 'ok', source: 'cloze' },
];

const parity = readParity(DIR);

/** An array as the exporter wrote it: {dims, data} or flat. */
const values = (a: Arr | number[]) => (Array.isArray(a) ? a : a.data);

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(DIR);
});
afterAll(async () => bundle.dispose());

describe('layered train step', () => {
  // headRows 3: the head's answer rows in parts of 3 (a large vocabulary's), weighted back to one mean.
  // keepBytes: every layer's backward from what its forward kept (default), none (each recomputes its
  // forward), or one layer's worth (the top layer keeps, the other recomputes).
  it.each([
    [undefined, undefined],
    [3, undefined],
    [undefined, 0],
    [undefined, 'one layer'],
  ] as const)(
    'two steps match torch: factors within 1e-5, losses within 1e-5 (head rows %s, keep %s)',
    async (headRows, keep) => {
      const m = bundle.manifest;
      expect(stepKind(m)).toBe('layered');
      const { bucket, batch, state: init } = parityRun(m, parity);
      const keepBytes = keep === 'one layer' ? bucket.saved_bytes! : keep;
      expect(keepPlan(m, bucket, keepBytes ?? KEEP_BYTES).saved).toEqual(
        keep === 0 ? [] : keep === 'one layer' ? [1] : [1, 0],
      );
      const runner = await openStepRunner(DIR, m, bucket, { provider: 'cpu', headRows, keepBytes });
      if (headRows) expect(parity.inputs.answer_mask!.data.filter((x) => x > 0).length).toBeGreaterThan(2 * headRows);
      let state: TrainState = init;
      const worst: number[] = [];
      const lossDiff: number[] = [];
      try {
        for (const [j, want] of parity.steps.entries()) {
          const res = await runStep(runner, m, state, batch, parity.step + j, parity.lr);
          state = res.state;
          lossDiff.push(Math.abs(res.loss - want.loss));
          let w = 0;
          const names = Object.keys(want.factors);
          expect(names.length).toBeGreaterThan(0);
          for (const name of names) {
            const got = state.get(name)!;
            values(want.factors[name]!).forEach((x, k) => (w = Math.max(w, Math.abs(got[k]! - x))));
          }
          worst.push(w);
        }
      } finally {
        await runner.dispose();
      }
      console.log(`layered vs torch: factors max |Δ| per step ${worst.join(', ')}; loss |Δ| ${lossDiff.join(', ')}`);
      expect(worst).toHaveLength(2);
      for (const w of worst) expect(w).toBeLessThanOrEqual(1e-5);
      for (const d of lossDiff) expect(d).toBeLessThanOrEqual(1e-5);
      // the steps moved the factors: a runner that returned its inputs would not pass
      const moved = Object.keys(parity.steps[1]!.factors).some((n) =>
        parity.init[n]!.data.some((x, k) => Math.abs(state.get(n)![k]! - x) > 1e-6),
      );
      expect(moved).toBe(true);
    },
  );

  it('a distillation runs end to end: K steps with progress, the loss goes down', async () => {
    const seen: number[] = [];
    const res = await distillSkill(bundle, SKILL, QUESTIONS, {
      steps: 6,
      lr: 1e-2,
      maxAnswerTokens: 4,
      onProgress: (p) => p.phase === 'train' && seen.push(p.step),
    });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    expect(res.losses).toHaveLength(6);
    expect(res.losses.every(Number.isFinite)).toBe(true);
    expect(res.losses.at(-1)!).toBeLessThan(res.losses[0]!);
    expect(res.adapter.rank).toBe(trainStepEntry(bundle.manifest).rank);
  });

  it('a non-finite loss stops at its step, saying so; a step can be timed', async () => {
    const rows = await teacherRows(bundle, SKILL, QUESTIONS, { maxAnswerTokens: 4 });
    await expect(distillRows(bundle, rows, { steps: 5, lr: Number.NaN })).rejects.toThrow(
      /stopped at step 2: the loss is NaN; nothing was stored/,
    );
    const seconds = await timeTrainStep(bundle, trainStepEntry(bundle.manifest).buckets[0]!, 2);
    expect(seconds).toBeGreaterThan(0);
  });
});
