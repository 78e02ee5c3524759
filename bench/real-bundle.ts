// bench/real-bundle: the SmolLM2-135M bundle (imported from its Q4_1 GGUF by `npm run check:real-model`
// into ~/.cache/pskills) as bench:engine and bench:distill report it, beside the same lm.onnx with its
// weight MatMuls in 4 bits (onnxruntime's MatMulNBits, written by bench/lm_4bit.py): lm.onnx size, load
// time, RSS after loading, time to first token (a short chat prompt and a 256-token one), decode
// tokens/s, and for the float32 bundle seconds per distillation step per bucket. Each variant runs in
// a child process of its own so that its RSS is its own. Skipped, with a message, when the cache is absent.
// Run: npm run bench:real-bundle [-- --no-steps]   (writes bench/results/real-bundle.json)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundle, type Bundle } from '../main/engine';
import { timeTrainStep } from '../main/engine/distill';
import { generateAll } from '../main/engine/generate';
import { trainStepEntry } from '../main/engine/train-step';
import { APP_ROOT } from '../main/paths';

const CACHE = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
export const REAL_BUNDLE = process.env.PSKILLS_REAL_BUNDLE ?? join(CACHE, 'smollm2-135m-instruct');
const Q4_BUNDLE = `${REAL_BUNDLE}-q4`;
// --weights q4 as shipped (int8 activations, a tied head in 8 bits), and its earlier form (float32 compute, head float32)
const Q4_F32_BUNDLE = `${REAL_BUNDLE}-q4-f32compute`;
const SAMPLE = 'Write a short story about a lighthouse keeper.';
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/real-bundle.json');
const THREADS = 2;
const DECODE_TOKENS = 64;
const RUNS = 3;

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface VariantResult {
  variant: string;
  lm_onnx_mb: number;
  load_s: number;
  rss_after_load_mib: number;
  peak_rss_mib: number;
  ttft_s: { chat: number; prompt_256: number };
  decode_tokens_per_s: number;
  decode_tokens_per_s_runs: number[];
  distill_step_s: Record<string, number> | null;
}

/** One variant, in this process (the child side). */
async function measure(dir: string, variant: string, steps: boolean): Promise<VariantResult> {
  const t0 = performance.now();
  const bundle: Bundle = await loadBundle(dir, { verifyHashes: false, intraOpNumThreads: THREADS });
  const loadS = (performance.now() - t0) / 1000;
  const rssAfterLoad = process.memoryUsage().rss / 2 ** 20;
  const chat = bundle.tokenizer.encode(bundle.chat.render([{ role: 'user', content: SAMPLE }]));
  const long = Array.from({ length: 256 }, (_, i) => chat[i % chat.length]!);
  const run = async (prompt: number[], n: number) => {
    const t = performance.now();
    await generateAll(bundle, [{ prompt, maxNewTokens: n, stopTokenIds: [] }]);
    return (performance.now() - t) / 1000;
  };
  await run(chat, 4); // warm-up: kernels and allocator
  const first: number[] = [];
  const firstLong: number[] = [];
  const perRun: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t1 = await run(chat, 1);
    first.push(t1);
    perRun.push(round(DECODE_TOKENS / ((await run(chat, DECODE_TOKENS + 1)) - t1), 2));
    firstLong.push(await run(long, 1));
  }
  let stepS: Record<string, number> | null = null;
  if (steps && bundle.manifest.train_step) {
    stepS = {};
    for (const b of trainStepEntry(bundle.manifest).buckets)
      stepS[`${b.batch}x${b.length}`] = round(await timeTrainStep(bundle, b, RUNS));
  }
  await bundle.dispose();
  return {
    variant,
    lm_onnx_mb: round(statSync(join(dir, 'lm.onnx')).size / 1e6, 1),
    load_s: round(loadS, 2),
    rss_after_load_mib: Math.round(rssAfterLoad),
    peak_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
    ttft_s: { chat: round(med(first)), prompt_256: round(med(firstLong)) },
    decode_tokens_per_s: med(perRun),
    decode_tokens_per_s_runs: perRun,
    distill_step_s: stepS,
  };
}

/** Decode tokens/s of both variants loaded side by side, runs alternating (the 2 cores are shared, so
 *  the ratio is the robust number); medians of `RUNS`. */
async function interleavedDecode(
  dirs: string[],
): Promise<{ tokens_per_s: number[]; runs: number[][]; greedy_32: string[] }> {
  const bundles: Bundle[] = [];
  for (const d of dirs) bundles.push(await loadBundle(d, { verifyHashes: false, intraOpNumThreads: THREADS }));
  const runs: number[][] = bundles.map(() => []);
  const greedy: string[] = [];
  try {
    const prompts = bundles.map((b) => b.tokenizer.encode(b.chat.render([{ role: 'user', content: SAMPLE }])));
    const time = async (i: number, n: number) => {
      const t = performance.now();
      await generateAll(bundles[i]!, [{ prompt: prompts[i]!, maxNewTokens: n, stopTokenIds: [] }]);
      return (performance.now() - t) / 1000;
    };
    // The same greedy answer from each: what 4 bits change in the text.
    for (let i = 0; i < bundles.length; i++) {
      const [r] = await generateAll(bundles[i]!, [{ prompt: prompts[i]!, maxNewTokens: 32 }]);
      greedy.push(bundles[i]!.tokenizer.decode([...r!.tokens]));
    }
    for (let r = 0; r < RUNS; r++)
      for (let i = 0; i < bundles.length; i++) {
        const t1 = await time(i, 1);
        runs[i]!.push(round(DECODE_TOKENS / ((await time(i, DECODE_TOKENS + 1)) - t1), 2));
      }
  } finally {
    for (const b of bundles) await b.dispose();
  }
  return { tokens_per_s: runs.map(med), runs, greedy_32: greedy };
}

function child(dir: string, variant: string, steps: boolean): VariantResult {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(APP_ROOT, 'bench/real-bundle.ts'), '--one', dir, variant, steps ? 'steps' : 'no-steps'],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.status !== 0 || !line.startsWith('{'))
    throw new Error(`bench/real-bundle ${variant}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(line) as VariantResult;
}

/** Both variants (the 4-bit one written first when missing), or null with why when the cache is absent. */
export type RealBundleBench =
  | {
      results: VariantResult[];
      interleaved_decode: { variants: string[]; tokens_per_s: number[]; runs: number[][]; greedy_32: string[] };
    }
  | { skipped: string };

export async function realBundleBench(opts: { steps: boolean }): Promise<RealBundleBench> {
  if (!existsSync(join(REAL_BUNDLE, 'bundle.json')))
    return { skipped: `${REAL_BUNDLE} is absent: npm run check:real-model builds it` };
  for (const [dir, extra] of [
    [Q4_BUNDLE, []],
    [Q4_F32_BUNDLE, ['--accuracy-level', '0', '--head-bits', '0']],
  ] as const) {
    if (existsSync(join(dir, 'bundle.json'))) continue;
    const r = spawnSync(PYTHON, [join(APP_ROOT, 'bench/lm_4bit.py'), REAL_BUNDLE, dir, ...extra], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('bench/lm_4bit.py failed');
  }
  const results = [
    child(REAL_BUNDLE, 'fp32 (dequantized from Q4_1)', opts.steps),
    child(Q4_BUNDLE, '4-bit MatMulNBits (block 32), int8 activations, head 8-bit', false),
    child(Q4_F32_BUNDLE, '4-bit MatMulNBits (block 32), float32 compute, head fp32', false),
  ];
  const side = await interleavedDecode([REAL_BUNDLE, Q4_BUNDLE, Q4_F32_BUNDLE]);
  return { results, interleaved_decode: { variants: results.map((v) => v.variant), ...side } };
}

/** bench:distill's 135M figures: seconds per train step per bucket of the float32 bundle (its own
 *  process, so the peak RSS is the train step's), or why they are missing. */
export function realDistillSteps():
  { distill_step_s: Record<string, number>; peak_rss_mib: number; bundle: string } | { skipped: string } {
  if (!existsSync(join(REAL_BUNDLE, 'bundle.json')))
    return { skipped: `${REAL_BUNDLE} is absent: npm run check:real-model builds it` };
  const r = child(REAL_BUNDLE, 'fp32 (dequantized from Q4_1)', true);
  if (!r.distill_step_s) return { skipped: `${REAL_BUNDLE} has no train-step graphs` };
  return { distill_step_s: r.distill_step_s, peak_rss_mib: r.peak_rss_mib, bundle: REAL_BUNDLE };
}

export function realBundleRows(r: RealBundleBench): [string, string][] {
  if ('skipped' in r) return [['135M bundle', `skipped: ${r.skipped}`]];
  const side: [string, string] = [
    '135M decode tok/s side by side, fp32 / 4-bit int8 activations / 4-bit float32 compute (runs alternating)',
    `${r.interleaved_decode.tokens_per_s.join(' / ')} (${r.interleaved_decode.runs.map((x) => x.join(', ')).join(' | ')})`,
  ];
  return [
    ...r.results.flatMap(
      (v) =>
        [
          [
            `135M ${v.variant}: lm.onnx MB / load s / RSS MiB (after load, peak)`,
            `${v.lm_onnx_mb} / ${v.load_s} / ${v.rss_after_load_mib}, ${v.peak_rss_mib}`,
          ],
          [
            `135M ${v.variant}: TTFT s (chat prompt, 256 tokens) / decode tok/s (runs)`,
            `${v.ttft_s.chat}, ${v.ttft_s.prompt_256} / ${v.decode_tokens_per_s} (${v.decode_tokens_per_s_runs.join(', ')})`,
          ],
          ...(v.distill_step_s
            ? [
                [
                  `135M ${v.variant}: s per distill step by bucket`,
                  Object.entries(v.distill_step_s)
                    .map(([b, s]) => `${b} ${s}`)
                    .join(', '),
                ] as [string, string],
              ]
            : []),
        ] as [string, string][],
    ),
    side,
  ];
}

if (process.argv[2] === '--one') {
  const [dir, variant, steps] = process.argv.slice(3) as [string, string, string];
  console.log(JSON.stringify(await measure(dir, variant, steps === 'steps')));
} else if (fileURLToPath(import.meta.url) === resolve(process.argv[1] ?? '')) {
  const load = loadavg()[0]!;
  const r = await realBundleBench({ steps: !process.argv.includes('--no-steps') });
  for (const [k, v] of realBundleRows(r)) console.log(`${k}  ${v}`);
  const machine = `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, ${THREADS} threads, load average ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`;
  console.log(`machine: ${machine}`);
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  writeFileSync(
    `${OUT}.tmp`,
    JSON.stringify({ bench: 'real-bundle', date: new Date().toISOString(), machine, ...r }, null, 2) + '\n',
  );
  renameSync(`${OUT}.tmp`, OUT);
  console.log(`wrote ${OUT}`);
}
