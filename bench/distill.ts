// bench/distill: distilling in the studio (onnxruntime-node running the bundle's train-step graphs)
// against Python on the same machine: seconds per step per bucket (Node, onnxruntime in Python, eager
// torch autograd; same threads, medians), and seconds per skill for a ~450-token skill (teacher pass +
// 40 steps). Writes the `node` key of bench/results/distill.json and keeps every other key (the
// Python distiller's `buckets` are written by the training package).
// Run: npm run bench:distill
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { practiceQuestions, type PracticeQuestion } from '../common/distill/practice';
import { loadBundle } from '../main/engine';
import { distillSkill } from '../main/engine/distill';
import { initState, TrainStepGraph, trainStepEntry, type TrainBatch } from '../main/engine/train-step';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';

const BUNDLE = join(APP_ROOT, 'resources/bundles/default');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/distill.json');
const SKILL = join(APP_ROOT, 'tests/fixtures/skillworld/filler/code-review/skills/review-change/SKILL.md');
const THREADS = 2;
const REPS = 5;
const STEPS = 40;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function nodeSteps(): Promise<Record<string, number>> {
  const bundle = await loadBundle(BUNDLE, { verifyHashes: false });
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const out: Record<string, number> = {};
  for (const bucket of trainStepEntry(m).buckets) {
    const graph = await TrainStepGraph.open(BUNDLE, m, bucket, { intraOpNumThreads: THREADS });
    const rng = seededRng(1);
    const n = bucket.batch * bucket.length;
    const batch: TrainBatch = {
      inputIds: Array.from({ length: n }, () => 4 + Math.floor(rng() * (m.architecture.vocab - 4))),
      attentionMask: new Array<number>(n).fill(1),
      positionIds: Array.from({ length: n }, (_, i) => i % bucket.length),
      answerMask: Float32Array.from({ length: n }, () => (rng() < 0.5 ? 1 : 0)),
      teacherIds: Array.from({ length: n * k }, () => Math.floor(rng() * m.architecture.vocab)),
      teacherLogp: Float32Array.from({ length: n * k }, () => Math.log(1 / k)),
    };
    let state = initState(m, null, 0);
    state = (await graph.run(state, batch, 1, 1e-3)).state; // warm-up
    const times: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      state = (await graph.run(state, batch, r + 2, 1e-3)).state;
      times.push((performance.now() - t0) / 1000);
    }
    out[`${bucket.batch}x${bucket.length}`] = median(times);
    await graph.dispose();
  }
  await bundle.dispose();
  return out;
}

async function nodeSkill() {
  const bundle = await loadBundle(BUNDLE, { verifyHashes: false, intraOpNumThreads: THREADS });
  const skill = readFileSync(SKILL, 'utf8');
  const fromSkill = practiceQuestions(skill);
  const generic = ['Review this patch for me.', 'Is this change safe to merge?', 'What should I check first?'];
  const questions: PracticeQuestion[] = [
    ...fromSkill,
    ...generic.map((q) => ({ question: q, source: 'test' as const })),
  ];
  const res = await distillSkill(bundle, skill, questions.slice(0, 16), { steps: STEPS, maxAnswerTokens: 48 });
  const tokens = bundle.tokenizer.encode(skill).length;
  await bundle.dispose();
  return {
    skill_tokens: tokens,
    questions: Math.min(16, questions.length),
    steps: STEPS,
    seconds_per_skill: res.seconds,
    teacher_seconds: res.teacherSeconds,
    train_seconds: res.seconds - res.teacherSeconds,
    first_loss: res.losses[0],
    final_loss: res.losses.at(-1),
  };
}

function pythonSteps(): Record<string, { ort_python_s_per_step: number; torch_s_per_step: number }> {
  const r = spawnSync(PYTHON, [join(APP_ROOT, 'bench/distill_step.py'), BUNDLE, String(THREADS), String(REPS)], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') },
  });
  if (r.status !== 0) throw new Error(`bench/distill_step.py failed: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

const node = await nodeSteps();
const python = pythonSteps();
const skill = await nodeSkill();
const buckets = Object.fromEntries(
  Object.entries(node).map(([b, s]) => {
    const p = python[b]!;
    return [
      b,
      {
        node_s_per_step: s,
        ort_python_s_per_step: p.ort_python_s_per_step,
        torch_s_per_step: p.torch_s_per_step,
        node_vs_python: s / p.torch_s_per_step,
        node_vs_ort_python: s / p.ort_python_s_per_step,
      },
    ];
  }),
);
const prior: Record<string, unknown> = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')) : {};
const result = {
  ...prior,
  node: {
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg() },
    threads: THREADS,
    bundle: 'resources/bundles/default',
    note: 'node_vs_python = Node s/step ÷ eager torch s/step (the Python distiller), same graph shape and threads',
    steps: buckets,
    skill,
    measured: new Date().toISOString(),
  },
};
writeFileSync(`${OUT}.tmp`, JSON.stringify(result, null, 2) + '\n');
renameSync(`${OUT}.tmp`, OUT);
console.log(JSON.stringify(result.node, null, 2));
