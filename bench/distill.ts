// bench/distill: distilling in the studio (onnxruntime-node running the bundle's train-step graphs)
// against Python on the same machine: seconds per step per bucket (Node, onnxruntime in Python, eager
// torch autograd; same threads, medians), and seconds per skill for a ~450-token skill (teacher pass +
// 40 steps), in the `node` key. Then, per SkillWorld length bucket (256 … 4096 tokens, one generated
// skill each, its practice questions), the whole distillation (teacher pass + 40 steps) by the engine
// and by the Python distiller (python -m pskills_train.distill; beyond the context both read per question
// the sections it needs), against the same skill's in-context prefill: `buckets.<tokens>` (docs/distill.md).
// Run: npm run bench:distill [-- --lengths 512]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { textPractice, type PracticeQuestion } from '../common/distill/practice';
import { loadBundle } from '../main/engine';
import { distillRows } from '../main/engine/distill';
import { fitSystem, teacherRows } from '../main/engine/distill-teacher';
import { distillSkill } from '../main/engine/distill-parts';
import { KvCache } from '../main/engine/kv-cache';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { initState, TrainLoop, TrainStepGraph, trainStepEntry } from '../main/engine/train-step';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';
import { realDistillSteps } from './real-bundle';

const BUNDLE = join(APP_ROOT, 'resources/bundles/default');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/distill.json');
const SKILL = join(APP_ROOT, 'tests/fixtures/skillworld/filler/code-review/skills/review-change/SKILL.md');
const THREADS = 2;
const REPS = 5;
const STEPS = 40;
// `--lengths 512,1024`: only those SkillWorld buckets (512, the headline, is always run).
const lengthsArg = process.argv.indexOf('--lengths');
const LENGTHS =
  lengthsArg > 0
    ? [...new Set([512, ...process.argv[lengthsArg + 1]!.split(',').map(Number)])].sort((a, b) => a - b)
    : [256, 512, 1024, 2048, 4096];
const QUESTIONS = 16;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function nodeSteps(): Promise<Record<string, number>> {
  const bundle = await loadBundle(BUNDLE, { verifyHashes: false });
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const out: Record<string, number> = {};
  for (const bucket of trainStepEntry(m).buckets) {
    // The distiller's own path: state kept as the graph's tensors, the bucket's feeds refilled in place.
    const graph = await TrainStepGraph.open(BUNDLE, m, bucket, { intraOpNumThreads: THREADS });
    const loop = new TrainLoop(m, initState(m, null, 0));
    const buf = loop.buffers(bucket);
    const rng = seededRng(1);
    buf.inputIds.forEach((_, i) => (buf.inputIds[i] = BigInt(4 + Math.floor(rng() * (m.architecture.vocab - 4)))));
    buf.attentionMask.fill(1n);
    buf.positionIds.forEach((_, i) => (buf.positionIds[i] = BigInt(i % bucket.length)));
    buf.answerMask.forEach((_, i) => (buf.answerMask[i] = rng() < 0.5 ? 1 : 0));
    buf.teacherIds.forEach((_, i) => (buf.teacherIds[i] = BigInt(Math.floor(rng() * m.architecture.vocab))));
    buf.teacherLogp.fill(Math.log(1 / k));
    await loop.run(graph, 1, 1e-3); // warm-up
    const times: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      await loop.run(graph, r + 2, 1e-3);
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
  const fromSkill = textPractice({ name: 'skill', description: '', text: skill });
  const generic = ['Review this patch for me.', 'Is this change safe to merge?', 'What should I check first?'];
  const questions: PracticeQuestion[] = [
    ...fromSkill,
    ...generic.map((q) => ({ question: q, source: 'tests' as const })),
  ];
  const res = await distillSkill(bundle, skill, questions.slice(0, 16), {
    steps: STEPS,
    maxAnswerTokens: 48,
    intraOpNumThreads: THREADS,
  });
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

interface WorldRow {
  skill: string;
  skill_path: string;
  length_bucket: number;
  skill_tokens: number;
  family: string;
  messages: { role: string; content: string }[];
}
const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as WorldRow);

/** A SkillWorld test world with every length bucket (seed 0); per bucket the first skill by name. */
function world(dir: string): { bucket: number; row: WorldRow; practice: string }[] {
  const r = spawnSync(
    PYTHON,
    ['-m', 'pskills_train.skillworld', 'generate', '--split', 'test', '--n', '100', '--seed', '0', '--out', dir],
    { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
  );
  if (r.status !== 0) throw new Error(`skillworld generate failed: ${r.stderr.slice(-2000)}`);
  const tasks = jsonl(join(dir, 'tasks.jsonl'));
  const practice = jsonl(join(dir, 'practice.jsonl'));
  return LENGTHS.map((bucket) => {
    const row = tasks.filter((t) => t.length_bucket === bucket).sort((a, b) => a.skill.localeCompare(b.skill))[0];
    if (!row) throw new Error(`the generated world has no ${bucket}-token skill`);
    const file = join(dir, `practice-${bucket}.jsonl`);
    const mine = practice.filter((p) => p.skill === row.skill).slice(0, QUESTIONS);
    writeFileSync(file, mine.map((p) => JSON.stringify(p)).join('\n') + '\n');
    return { bucket, row, practice: file };
  });
}

async function nodeBucket(skillPath: string, practiceFile: string) {
  const bundle = await loadBundle(BUNDLE, { verifyHashes: false, intraOpNumThreads: THREADS });
  try {
    const skill = readFileSync(skillPath, 'utf8');
    const questions: PracticeQuestion[] = jsonl(practiceFile).map((p) => ({
      question: p.messages.find((m) => m.role === 'user')!.content,
      source: 'tests',
    }));
    const distill = async () => {
      const t0 = performance.now();
      const rows = await teacherRows(bundle, skill, questions, { maxAnswerTokens: 48 });
      const teacher = (performance.now() - t0) / 1000;
      const res = await distillRows(bundle, rows, { steps: STEPS, seed: 0, intraOpNumThreads: THREADS });
      return { seconds: (performance.now() - t0) / 1000, teacher, res, rows };
    };
    // Cold: the train-step sessions are opened inside. Warm: the same skill again from a fresh (zero)
    // adapter with the sessions the bundle keeps open, as a second distillation in the studio runs, and
    // as the Python distiller is timed (its model loaded before its timer starts).
    const cold = await distill();
    const { seconds, teacher, res, rows } = await distill();
    // The same skill in context (cut to fit, as the teacher reads it): one prefill of the first question.
    const q = questions[0]!.question;
    const prompt = bundle.tokenizer.encode(
      bundle.chat.render([
        { role: 'system', content: fitSystem(bundle, skill, [{ role: 'user', content: q }], 49) },
        { role: 'user', content: q },
      ]),
    );
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t1 = performance.now();
      await bundle.lm.forward({
        batch: 1,
        inputIds: prompt,
        positionIds: prompt.map((_, j) => j),
        attentionMask: prompt.map(() => 1),
        cache: KvCache.empty(bundle.manifest, 1),
        lora: bundle.lm.loraFeeds([null]),
        logitsToKeep: 1,
      });
      times.push((performance.now() - t1) / 1000);
    }
    return {
      seconds_per_skill: seconds,
      cold_seconds_per_skill: cold.seconds,
      cold_train_seconds: cold.res.seconds,
      teacher_seconds: teacher,
      train_seconds: res.seconds,
      seconds_per_step: res.seconds / STEPS,
      rows: rows.length,
      teacher: 'beyond the context, the sections each question needs',
      first_loss: res.losses[0],
      final_loss: res.losses.at(-1),
      prefill_tokens: prompt.length,
      in_context_prefill_seconds: median(times),
    };
  } finally {
    await bundle.dispose();
  }
}

function pythonBucket(skillPath: string, practiceFile: string) {
  const r = spawnSync(
    PYTHON,
    [
      '-m',
      'pskills_train.distill',
      ...['--bundle', BUNDLE, '--skill', skillPath, '--practice', practiceFile],
      ...['--steps', String(STEPS), '--seed', '0', '--threads', String(THREADS), '--json'],
    ],
    { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
  );
  if (r.status !== 0) throw new Error(`python -m pskills_train.distill failed: ${r.stderr.slice(-2000)}`);
  const o = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  return {
    seconds_per_skill: o.seconds as number,
    teacher_seconds: o.teacher_seconds as number,
    train_seconds: o.train_seconds as number,
    seconds_per_step: o.seconds_per_step as number,
    rows: (o.rows as unknown[]).length,
    teacher: o.focused > 0 ? `the sections each question needs (${o.focused} rows)` : 'whole skill in context',
    first_loss: o.losses[0] as number,
    final_loss: o.losses.at(-1) as number,
    prefill_tokens: o.prefill_tokens as number,
    in_context_prefill_seconds: o.prefill_seconds as number,
  };
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
const tmp = mkdtempSync(join(tmpdir(), 'bench-distill-'));
const perBucket: Record<string, unknown> = {};
const table: string[] = [];
try {
  for (const { bucket, row, practice } of world(tmp)) {
    const skillPath = join(tmp, row.skill_path);
    const n = await nodeBucket(skillPath, practice);
    const p = pythonBucket(skillPath, practice);
    perBucket[String(bucket)] = {
      skill: row.skill,
      family: row.family,
      skill_tokens: row.skill_tokens,
      questions: QUESTIONS,
      steps: STEPS,
      seconds_per_skill: p.seconds_per_skill,
      node_seconds_per_skill: n.seconds_per_skill,
      node_cold_seconds_per_skill: n.cold_seconds_per_skill,
      in_context_prefill_seconds: p.in_context_prefill_seconds,
      node_in_context_prefill_seconds: n.in_context_prefill_seconds,
      node_vs_python: n.seconds_per_skill / p.seconds_per_skill,
      python: p,
      node: n,
    };
    table.push(
      [
        String(bucket).padStart(6),
        String(row.skill_tokens).padStart(6),
        n.cold_seconds_per_skill.toFixed(1).padStart(8),
        n.seconds_per_skill.toFixed(1).padStart(8),
        p.seconds_per_skill.toFixed(1).padStart(8),
        n.seconds_per_step.toFixed(3).padStart(8),
        p.seconds_per_step.toFixed(3).padStart(8),
        (n.seconds_per_skill / p.seconds_per_skill).toFixed(2).padStart(6),
        n.in_context_prefill_seconds.toFixed(3).padStart(8),
        p.in_context_prefill_seconds.toFixed(3).padStart(8),
        p.teacher,
      ].join(' '),
    );
    console.error(table.at(-1));
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const b512 = perBucket['512'] as {
  node: { seconds_per_skill: number; cold_seconds_per_skill: number; seconds_per_step: number };
  python: { seconds_per_skill: number; seconds_per_step: number };
};
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
  threads: THREADS,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadavg: loadavg() },
  note: "buckets.<tokens>: one SkillWorld skill (test split, seed 0) with its first 16 practice questions, teacher pass + 40 steps, seed 0, zero init. seconds_per_skill and in_context_prefill_seconds: the Python distiller (python -m pskills_train.distill; beyond the context, the sections each question needs); node_*: the engine (beyond the context, the sections each question needs), warm: a second distillation of the same skill from a fresh adapter with the bundle's train-step sessions already open (Python's model is loaded before its timer too); node_cold_*: the first distillation, sessions opened inside. node_vs_python: Node warm ÷ Python seconds.",
  seconds_per_step: { node: b512.node.seconds_per_step, python: b512.python.seconds_per_step, bucket: 512 },
  seconds_per_skill: {
    node: b512.node.seconds_per_skill,
    node_cold: b512.node.cold_seconds_per_skill,
    python: b512.python.seconds_per_skill,
    bucket: 512,
  },
  node_vs_python: b512.node.seconds_per_skill / b512.python.seconds_per_skill,
  node_vs_python_basis: 'warm (second distillation, train-step sessions open); Python model loaded before its timer',
  node_cold_vs_python: b512.node.cold_seconds_per_skill / b512.python.seconds_per_skill,
  targets: {
    node_vs_python_le_1: b512.node.seconds_per_skill <= b512.python.seconds_per_skill,
    node_512_le_30s: b512.node.seconds_per_skill <= 30,
    python_512_le_60s: b512.python.seconds_per_skill <= 60,
  },
  buckets: perBucket,
  measured: new Date().toISOString(),
};
// The SmolLM2-135M bundle when `npm run check:real-model` has built it (bench/real-bundle.ts). Its child
// can die (killed for memory on a small machine): the run's own figures are written all the same.
let real135m: ReturnType<typeof realDistillSteps>;
try {
  real135m = realDistillSteps();
} catch (err) {
  real135m = { skipped: `the 135M step child failed: ${(err as Error).message.split('\n')[0]}` };
}
Object.assign(result, { real_135m: real135m });
writeFileSync(`${OUT}.tmp`, JSON.stringify(result, null, 2) + '\n');
renameSync(`${OUT}.tmp`, OUT);
console.log(JSON.stringify(result.node, null, 2));
console.log(`threads ${THREADS}; ${QUESTIONS} questions, ${STEPS} steps, teacher pass included (seconds)`);
console.log(
  ' bucket tokens cold/sk warm/sk   py/sk  node/st    py/st  ratio node_pre   py_pre python teacher  (ratio = warm ÷ py)',
);
for (const line of table) console.log(line);
console.log(
  'skipped' in real135m
    ? `135M bundle: skipped (${real135m.skipped})`
    : `135M bundle, s per step: ${Object.entries(real135m.distill_step_s)
        .map(([b, v]) => `${b} ${v}`)
        .join(', ')} (peak RSS ${real135m.peak_rss_mib} MiB)`,
);
console.log(
  `512-token skill: Node cold ${b512.node.cold_seconds_per_skill.toFixed(1)} s, warm ${b512.node.seconds_per_skill.toFixed(1)} s (target ≤ 30), Python ${b512.python.seconds_per_skill.toFixed(1)} s (target ≤ 60), node_vs_python ${result.node_vs_python.toFixed(2)} warm (cold ${result.node_cold_vs_python.toFixed(2)}; target ≤ 1.0)`,
);
