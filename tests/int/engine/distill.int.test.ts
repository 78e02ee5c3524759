// Distilling in the engine on the tiny fixture with a train-step graph: teacher rows aligned to the
// student's positions, K steps with progress, cancel within one step, a non-finite loss stops with a
// clear message, and a bundle without the graph is refused before any work.
import { join } from 'node:path';
import type { PracticeQuestion } from '../../../common/distill/practice';
import { EngineWorker } from '../../../main/engine/engine-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { distillRows, type DistillProgress } from '../../../main/engine/distill';
import { teacherPrompts, teacherRows } from '../../../main/engine/distill-teacher';
import { packBatch } from './train-batch';
import { distillSkill } from '../../../main/engine/distill-parts';
import { APP_ROOT } from '../../../main/paths';
import { FIXTURE_DIR } from './fixture';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const SKILL = '# Greeting\n\nAlways answer with the word tests.';
const QUESTIONS: PracticeQuestion[] = [
  { question: 'hi', source: 'tests' },
  { question: 'go', source: 'examples' },
  { question: 'ok', source: 'cloze' },
];
let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(DIR);
});
afterAll(async () => bundle.dispose());

describe('distill', () => {
  it('teacher rows: the greedy answer follows the student prompt, one top-k per answer token', async () => {
    const rows = await teacherRows(bundle, SKILL, QUESTIONS, { maxAnswerTokens: 4 });
    expect(rows.length).toBeGreaterThan(0);
    const k = bundle.manifest.train_step!.top_k;
    for (const r of rows) {
      const n = r.topIds.length / k;
      expect(n).toBeGreaterThan(0);
      expect(r.ids.length).toBeLessThanOrEqual(16);
      // the teacher's greedy token is the answer token the student sees next
      for (let j = 0; j < n; j++) expect(r.topIds[j * k]).toBe(r.ids[r.answerFrom + j + 1]);
      const logp = Array.from(r.topLogp.subarray(0, k));
      expect(logp).toEqual([...logp].sort((a, b) => b - a));
    }
    const batch = packBatch(bundle.manifest, rows.slice(0, 1), 2, 16);
    expect(Array.from(batch.attentionMask).slice(16)).toEqual(new Array(16).fill(0)); // an all-padding row
  });

  it('a skill longer than the context: each question reads the sections it needs', () => {
    const filler = (i: number) => `## Notes ${i}\n\n${'plain words about nothing much here. '.repeat(8)}\n\n`;
    const long = `# Greeting\n\nIntro.\n\n${filler(1)}## Zorp\n\nSay zorp twice.\n\n${filler(2)}${filler(3)}`;
    const max = bundle.manifest.architecture.max_positions;
    expect(bundle.tokenizer.encode(long).length).toBeGreaterThan(max);
    const [zorp, other] = teacherPrompts(
      bundle,
      long,
      [
        { question: 'zorp?', source: 'tests' },
        { question: 'hi', source: 'tests' },
      ],
      4,
      undefined,
    ).map((p) => {
      expect(p.length).toBeLessThanOrEqual(max - 5);
      return bundle.tokenizer.decode(p);
    });
    expect(zorp).toContain('Say zorp twice.');
    expect(zorp).toContain('Intro.'); // the head is always read
    expect(zorp).not.toContain('## Notes'); // sections sharing no word with the question are not
    expect(other).not.toContain('Say zorp twice.');
  });

  it('K steps with progress; the loss goes down on its own practice rows', async () => {
    const seen: DistillProgress[] = [];
    const res = await distillSkill(bundle, SKILL, QUESTIONS, {
      steps: 6,
      lr: 1e-2,
      maxAnswerTokens: 4,
      onProgress: (p) => seen.push(p),
    });
    expect(res.losses).toHaveLength(6);
    expect(res.losses.every(Number.isFinite)).toBe(true);
    expect(res.losses.at(-1)!).toBeLessThan(res.losses[0]!);
    expect(seen[0]!.phase).toBe('teacher');
    expect(seen.filter((p) => p.phase === 'train').map((p) => p.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(seen.at(-1)!.secondsLeft).toBe(0);
    expect(res.adapter.rank).toBe(bundle.manifest.train_step!.rank);
  });

  it('cancel stops within one step; a non-finite loss stops at that step and says so', async () => {
    const rows = await teacherRows(bundle, SKILL, QUESTIONS, { maxAnswerTokens: 4 });
    const ctl = new AbortController();
    const steps: number[] = [];
    await expect(
      distillRows(bundle, rows, {
        steps: 20,
        signal: ctl.signal,
        onProgress: (p) => {
          steps.push(p.step);
          if (p.step === 2) ctl.abort();
        },
      }),
    ).rejects.toThrow(/cancelled; nothing was stored/);
    expect(steps).toEqual([1, 2]);
    await expect(distillRows(bundle, rows, { steps: 5, lr: Number.NaN })).rejects.toThrow(
      /stopped at step 2: the loss is NaN; nothing was stored/,
    );
  });

  it('a bundle without train_step is refused before the teacher pass', async () => {
    const plain = await loadBundle(FIXTURE_DIR, { verifyHashes: false });
    await expect(distillSkill(plain, SKILL, QUESTIONS)).rejects.toThrow(/Instant only/);
    await plain.dispose();
  });

  it('in the engine worker: progress streams back, and a second distillation of the same skill is refused', async () => {
    const worker = new EngineWorker();
    try {
      const steps: number[] = [];
      const first = worker.distill(bundle, 'greet@1', SKILL, QUESTIONS, {
        steps: 3,
        maxAnswerTokens: 4,
        onProgress: (p) => steps.push(p.step),
      });
      await expect(worker.distill(bundle, 'greet@1', SKILL, QUESTIONS, { steps: 3 })).rejects.toThrow(
        /greet@1 is already being distilled/,
      );
      const res = await first;
      expect(steps).toEqual([0, 1, 2, 3]);
      expect(res.losses).toHaveLength(3);
      expect(res.adapter.targets.get('0.q')!.A).toBeInstanceOf(Float32Array);
      // once it is done the skill can be distilled again
      await expect(
        worker.distill(bundle, 'greet@1', SKILL, QUESTIONS, { steps: 1, maxAnswerTokens: 4 }),
      ).resolves.toBeTruthy();
    } finally {
      await worker.dispose();
    }
  });
});
