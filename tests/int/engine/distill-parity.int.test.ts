// Parity of the studio's distillation with the Python distiller (docs/distill.md "Parity with the
// studio"): on the default bundle and the SkillWorld fixture world, the same skill, practice questions,
// seed and steps give the same teacher rows, loss curves within 2 % at every step, and the same checker
// outcomes on the world's eval tasks. Batches and zero init come from the generators both sides share
// (main/engine/distill-order.ts, seededRng), so nothing here passes one side's choices to the other.
// Needs training/.venv (python -m pskills_train.distill); skipped without it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PracticeQuestion } from '../../../common/distill/practice';
import { check, type CheckerSpec } from '../../../common/skillworld/check';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { distillRows } from '../../../main/engine/distill';
import { teacherRows, type TeacherRow } from '../../../main/engine/distill-teacher';
import { generateAll } from '../../../main/engine/generate';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../../../main/paths';

const PYTHON = join(APP_ROOT, 'training', '.venv', 'bin', 'python');
const WORLD = join(APP_ROOT, 'tests/fixtures/skillworld/distill');
const SKILL = join(WORLD, 'skills/brotro-mixtus/SKILL.md');
const QUESTIONS = 16;
const STEPS = 40;
const SEED = 3;
const THREADS = 2;
const MAX_NEW = 32;

interface Line {
  task_id: string;
  messages: { role: string; content: string }[];
  checker: CheckerSpec;
}
interface PyOut {
  rows: { ids: number[]; answer_from: number; answer: string }[];
  losses: number[];
  tasks: { task_id: string; generated: string; pass: boolean }[];
}
const lines = (file: string) =>
  readFileSync(join(WORLD, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

/** Largest relative difference of two loss curves, step by step. */
function curveGap(a: readonly number[], b: readonly number[]): number {
  expect(a.length).toBe(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - b[i]!) / Math.abs(b[i]!)));
}

describe.skipIf(!existsSync(PYTHON))('distillation: the engine against the Python distiller', () => {
  let bundle: Bundle;
  let py: PyOut;
  let rows: TeacherRow[];
  let losses: number[];
  let passes: boolean[];
  const tasks = lines('tasks.jsonl');

  beforeAll(async () => {
    const r = spawnSync(
      PYTHON,
      [
        '-m',
        'pskills_train.distill',
        ...['--bundle', DEFAULT_BUNDLE_DIR, '--skill', SKILL, '--practice', join(WORLD, 'practice.jsonl')],
        ...['--questions', String(QUESTIONS), '--tasks', join(WORLD, 'tasks.jsonl')],
        ...['--steps', String(STEPS), '--seed', String(SEED), '--threads', String(THREADS)],
        ...['--max-new-tokens', String(MAX_NEW), '--json'],
      ],
      { encoding: 'utf8', cwd: APP_ROOT, env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
    );
    if (r.status !== 0) throw new Error(`python -m pskills_train.distill failed: ${r.stderr.slice(-3000)}`);
    py = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as PyOut;

    bundle = await loadBundle(DEFAULT_BUNDLE_DIR, { verifyHashes: false, intraOpNumThreads: THREADS });
    const questions: PracticeQuestion[] = lines('practice.jsonl')
      .slice(0, QUESTIONS)
      .map((l) => ({ question: l.messages.find((m) => m.role === 'user')!.content, source: 'tests' }));
    rows = await teacherRows(bundle, readFileSync(SKILL, 'utf8'), questions, { maxAnswerTokens: 48 });
    const res = await distillRows(bundle, rows, { steps: STEPS, seed: SEED });
    losses = res.losses;
    const answers = await generateAll(
      bundle,
      tasks.map((t) => ({
        prompt: bundle.tokenizer.encode(bundle.chat.render(t.messages.filter((m) => m.role !== 'assistant'))),
        maxNewTokens: MAX_NEW,
        adapter: res.adapter,
      })),
    );
    // The answer without its stop token, as the Python side decodes it.
    const stops = new Set(bundle.manifest.special_tokens.stop);
    passes = tasks.map((t, i) =>
      check(t.checker, bundle.tokenizer.decode(answers[i]!.tokens.filter((id) => !stops.has(id)))),
    );
  }, 900_000);
  afterAll(async () => bundle?.dispose());

  it('the teacher gives the same rows: student ids (prompt and answer) and answer start', () => {
    expect(rows.length).toBe(py.rows.length);
    rows.forEach((r, i) => {
      expect(r.ids).toEqual(py.rows[i]!.ids);
      expect(r.answerFrom).toBe(py.rows[i]!.answer_from - 1); // the position that predicts the first answer token
    });
  });

  it('the loss curves agree within 2 % at every step', () => {
    expect(losses).toHaveLength(STEPS);
    const gap = curveGap(losses, py.losses);
    console.log(
      `loss gap ${gap}; node ${losses.map((x) => x.toFixed(4)).join(' ')}; python ${py.losses.map((x) => x.toFixed(4)).join(' ')}`,
    );
    expect(gap).toBeLessThanOrEqual(0.02);
    expect(losses.at(-1)!).toBeLessThan(losses[0]! / 4); // and it is a real run: the loss fell
  });

  it('the distilled adapters pass and fail the same checker tasks', () => {
    expect(passes).toEqual(py.tasks.map((t) => t.pass));
    expect(passes.some(Boolean)).toBe(true); // the fixture skill is learnt at 40 steps: not a vacuous match
  });
});
