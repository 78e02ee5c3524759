// bench/engine: the generation engine on the tiny fixture bundle and on a ~10M-parameter random
// bundle of a default-like shape (written by the Python bundle writer into .cache/, not committed);
// and, when `npm run check:real-model` has built it, the SmolLM2-135M bundle in float32 and with 4-bit
// MatMulNBits weights (bench/real-bundle.ts: decode, TTFT, RSS, each in a child process).
// Ratios are measured side by side in one process, runs interleaved, medians reported.
// Run: node --import tsx bench/engine.ts
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { LoraPair, TargetKey } from '../main/adapters/types';
import {
  checkAdapterFits,
  engineAdapter,
  generateBatch,
  loadBundle,
  type Bundle,
  type EngineAdapter,
  type GenerateRequest,
} from '../main/engine';
import { KvCache } from '../main/engine/kv-cache';
import { defaultThreads } from '../main/engine/ort';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';
import { realBundleBench, realBundleRows } from './real-bundle';

const FIXTURE = join(APP_ROOT, 'tests/fixtures/bundle-tiny');
const B10M = join(APP_ROOT, '.cache/bench-bundle-10m');
const B10M_PLAIN = join(APP_ROOT, '.cache/bench-bundle-10m-plain');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const RANK = 8;
const PROMPT = 16;
const NEW_TOKENS = 64;
const PREFILL = 128;
const REPS = 7;
const LORA_TARGET = 0.95; // LoRA r=8 throughput as a share of the plain model's
const BATCH_TARGET = 3;

function ensureBundle(dir: string, extra: string[]): void {
  if (existsSync(join(dir, 'bundle.json'))) return;
  const args = [
    '-m',
    'pskills_train.export.bundle',
    '--out',
    dir,
    '--random-config',
    'bench-10m',
    '--created',
    '2025-01-01T00:00:00Z',
    '--force',
    ...extra,
  ];
  const r = spawnSync(PYTHON, args, { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`bundle writer failed for ${dir}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function randomAdapter(b: Bundle, seed: number): EngineAdapter {
  const rng = seededRng(seed);
  const targets = new Map<TargetKey, LoraPair>();
  for (const layer of b.manifest.lora.layers) {
    for (const { module, d_in, d_out } of b.manifest.lora.targets) {
      const A = Float32Array.from({ length: d_in * RANK }, () => (rng() - 0.5) / Math.sqrt(d_in));
      const B = Float32Array.from({ length: RANK * d_out }, () => (rng() - 0.5) * 0.04);
      targets.set(`${layer}.${module}`, { dIn: d_in, dOut: d_out, A, B });
    }
  }
  return engineAdapter(RANK, targets);
}

const promptIds = (b: Bundle, n: number, offset = 0) =>
  Array.from({ length: n }, (_, i) => 10 + ((i * 7 + offset) % (b.manifest.tokenizer.vocab_size - 10)));

/** Runs one generation: total ms, time to first token, and wall and CPU ms per decode step.
 * CPU time (all threads of this process, ORT's included) moves less than wall time on a shared box. */
async function timedGenerate(b: Bundle, requests: GenerateRequest[]) {
  const t0 = performance.now();
  const stamps: number[] = [];
  let cpu0 = process.cpuUsage();
  let last = -1;
  for await (const e of generateBatch(b, requests)) {
    if (e.row <= last || stamps.length === 0) stamps.push(performance.now()); // one stamp per step
    if (stamps.length === 1 && e.row === 0) cpu0 = process.cpuUsage();
    last = e.row;
  }
  const cpu = process.cpuUsage(cpu0);
  const total = performance.now() - t0;
  const steps = stamps.length - 1;
  return {
    total,
    ttft: stamps[0]! - t0,
    decodeStepMs: (stamps.at(-1)! - stamps[0]!) / steps,
    decodeStepCpuMs: (cpu.user + cpu.system) / 1000 / steps,
  };
}

const request = (b: Bundle, adapter: EngineAdapter | null, offset = 0): GenerateRequest => ({
  prompt: promptIds(b, PROMPT, offset),
  adapter,
  maxNewTokens: NEW_TOKENS,
  stopTokenIds: [],
});

async function loadMs(dir: string) {
  const hashed: number[] = [];
  const unhashed: number[] = [];
  for (let i = 0; i < 3; i++) {
    for (const [verifyHashes, into] of [
      [true, hashed],
      [false, unhashed],
    ] as const) {
      const b = await loadBundle(dir, { verifyHashes });
      into.push(b.loadMs);
      await b.dispose();
    }
  }
  return { load_ms: median(hashed), load_ms_without_hashing: median(unhashed) };
}

async function prefillTokS(b: Bundle) {
  const ids = promptIds(b, PREFILL);
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const t = performance.now();
    await b.lm.forward({
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, p) => p),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(b.manifest, 1),
      lora: b.lm.loraFeeds([null]),
    });
    times.push(performance.now() - t);
  }
  return (PREFILL / median(times)) * 1000;
}

type Metrics = Record<string, number>;

/** Interleaves the variants rep by rep so machine load hits them alike; medians per metric.
 * Short variants (one forward, one first token) take many reps: load bursts on this shared box last
 * longer than they do, and a median over many interleaved reps is what holds still. */
async function interleaved<K extends string>(
  variants: Record<K, () => Promise<Metrics>>,
  reps = REPS,
): Promise<Record<K, Metrics>> {
  const keys = Object.keys(variants) as K[];
  const runs = new Map<K, Metrics[]>(keys.map((k) => [k, []]));
  for (const k of keys) await variants[k](); // warm-up
  for (let i = 0; i < reps; i++) for (const k of keys) runs.get(k)!.push(await variants[k]());
  const out = {} as Record<K, Metrics>;
  for (const k of keys) {
    const list = runs.get(k)!;
    out[k] = Object.fromEntries(Object.keys(list[0]!).map((m) => [m, median(list.map((x) => x[m]!))]));
  }
  return out;
}

async function main() {
  ensureBundle(B10M, []);
  ensureBundle(B10M_PLAIN, ['--no-lora-inputs']);
  const loadAvg = loadavg()[0]!;
  const results: Record<string, unknown> = {};
  const rows: [string, string][] = [];

  for (const [name, dir] of [
    ['fixture (0.1M)', FIXTURE],
    ['random 10M', B10M],
  ] as const) {
    const load = await loadMs(dir);
    const b = await loadBundle(dir);
    const prefill = await prefillTokS(b);
    const { none } = await interleaved({
      none: async () => ({ ms: (await timedGenerate(b, [request(b, null)])).decodeStepMs }),
    });
    const decodeMs = none!.ms!;
    results[name] = { ...load, prefill_tok_s: prefill, decode_tok_s: 1000 / decodeMs };
    rows.push([
      `${name}: load ms (sha256 / no hash)`,
      `${load.load_ms.toFixed(0)} / ${load.load_ms_without_hashing.toFixed(0)}`,
    ]);
    rows.push([`${name}: prefill tok/s (${PREFILL} tokens)`, prefill.toFixed(0)]);
    rows.push([`${name}: decode tok/s (batch 1, no adapter)`, (1000 / decodeMs).toFixed(1)]);
    await b.dispose();
  }

  const lora = await loadBundle(B10M);
  const plain = await loadBundle(B10M_PLAIN);
  const adapters = [1, 2, 3, 4].map((s) => randomAdapter(lora, s));
  const step = async (b: Bundle, ad: EngineAdapter | null) => {
    const r = await timedGenerate(b, [request(b, ad)]);
    return { wall: r.decodeStepMs, cpu: r.decodeStepCpuMs };
  };
  const m = await interleaved(
    { plain: () => step(plain, null), r0: () => step(lora, null), r8: () => step(lora, adapters[0]!) },
    6 * REPS - 1, // 41 rounds: the two differ by a few %, and load bursts on this box last seconds
  );
  const decode = { plain: m.plain.wall!, r0: m.r0.wall!, r8: m.r8.wall! };
  const decodeCpu = { plain: m.plain.cpu!, r0: m.r0.cpu!, r8: m.r8.cpu! };
  const slowdown = decode.r8 / decode.plain - 1;
  const slowdownCpu = decodeCpu.r8 / decodeCpu.plain - 1;
  rows.push([
    `10M decode ms/token wall: plain export / LoRA graph r=0 / r=${RANK}`,
    `${decode.plain.toFixed(2)} / ${decode.r0.toFixed(2)} / ${decode.r8.toFixed(2)}`,
  ]);
  rows.push([
    `10M decode ms/token CPU:  plain export / LoRA graph r=0 / r=${RANK}`,
    `${decodeCpu.plain.toFixed(2)} / ${decodeCpu.r0.toFixed(2)} / ${decodeCpu.r8.toFixed(2)}`,
  ]);
  rows.push([
    `10M decode r=${RANK} LoRA vs plain export, wall / CPU (target ≤ +10 %)`,
    `${(100 * slowdown).toFixed(1)} % / ${(100 * slowdownCpu).toFixed(1)} %`,
  ]);
  // The target is stated as throughput: LoRA r=8 tok/s ÷ plain tok/s, target ≥ 0.95×.
  const loraThroughput = decode.plain / decode.r8;
  rows.push([
    `10M decode throughput r=${RANK} LoRA / plain export (target ≥ ${LORA_TARGET}×)`,
    `${loraThroughput.toFixed(3)}× ${loraThroughput >= LORA_TARGET ? 'met' : 'NOT met'} (CPU time: ${(decodeCpu.plain / decodeCpu.r8).toFixed(3)}×)`,
  ]);

  // One decode forward alone (ORT run + feed checks, no sampling or streaming): the graph's share.
  const decodeForward = async (b: Bundle, ad: EngineAdapter | null) => {
    const lo = b.lm.loraFeeds([ad]);
    const ids = promptIds(b, 32);
    const { cache } = await b.lm.forward({
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, p) => p),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(b.manifest, 1),
      lora: lo,
    });
    return async () => {
      const t0 = performance.now();
      await b.lm.forward({
        batch: 1,
        inputIds: [11],
        positionIds: [32],
        attentionMask: Array<number>(33).fill(1),
        cache,
        lora: lo,
      });
      return { ms: performance.now() - t0 };
    };
  };
  const f = await interleaved(
    {
      plain: await decodeForward(plain, null),
      r0: await decodeForward(lora, null),
      r8: await decodeForward(lora, adapters[0]!),
    },
    60 * REPS,
  );
  const forward = { plain: f.plain.ms!, r0: f.r0.ms!, r8: f.r8.ms! };
  rows.push([
    `10M one decode forward ms (past 32): plain / r=0 / r=${RANK}`,
    `${forward.plain.toFixed(2)} / ${forward.r0.toFixed(2)} / ${forward.r8.toFixed(2)} (${(100 * (forward.r8 / forward.plain - 1)).toFixed(1)} %)`,
  ]);

  const fourRows = adapters.map((ad, i) => request(lora, ad, i * 3));
  const b4 = await interleaved({
    batched: async () => ({ ms: (await timedGenerate(lora, fourRows)).total }),
    sequential: async () => {
      let ms = 0;
      for (const r of fourRows) ms += (await timedGenerate(lora, [r])).total;
      return { ms };
    },
  });
  const batch = { batched: b4.batched.ms!, sequential: b4.sequential.ms! };
  const tokens = fourRows.length * NEW_TOKENS;
  const speedup = batch.sequential / batch.batched;
  rows.push([
    `10M 4 rows × 4 adapters: batched / sequential tok/s`,
    `${((tokens / batch.batched) * 1000).toFixed(1)} / ${((tokens / batch.sequential) * 1000).toFixed(1)}`,
  ]);
  rows.push([
    `10M batch of 4 vs sequential throughput (target ≥ ${BATCH_TARGET}×)`,
    `${speedup.toFixed(2)}× ${speedup >= BATCH_TARGET ? 'met' : 'NOT met'}`,
  ]);

  // Switching adapters: a request's lora.* feeds are validated and packed once per adapter (cached by
  // identity, see LoraFeedCache); the session stays. A fresh object with the same arrays = first use.
  const fresh = (ad: EngineAdapter) => engineAdapter(ad.rank, new Map(ad.targets));
  const feedsMs = {
    first_use: [] as number[],
    first_use_prechecked: [] as number[],
    known_switch: [] as number[],
    no_adapter: [] as number[],
  };
  for (let i = 0; i < 21; i++) {
    const timed = (into: number[], f: () => unknown) => {
      const t = performance.now();
      f();
      into.push(performance.now() - t);
    };
    const a = fresh(adapters[i % 4]!);
    timed(feedsMs.first_use, () => lora.lm.loraFeeds([a]));
    const b = fresh(adapters[i % 4]!);
    checkAdapterFits(lora.manifest, b); // as the adapter service does when it loads one
    timed(feedsMs.first_use_prechecked, () => lora.lm.loraFeeds([b]));
    timed(feedsMs.known_switch, () => lora.lm.loraFeeds([adapters[i % 2]!]));
    timed(feedsMs.no_adapter, () => lora.lm.loraFeeds([null]));
  }
  const feeds = Object.fromEntries(Object.entries(feedsMs).map(([k, v]) => [k, median(v)])) as Record<
    keyof typeof feedsMs,
    number
  >;
  let switches = 0;
  const ttftOf = async (ad: EngineAdapter | null) => ({
    ms: (await timedGenerate(lora, [{ ...request(lora, ad), maxNewTokens: 1 }])).ttft,
  });
  const t = await interleaved(
    {
      none: () => ttftOf(null),
      sameAdapter: () => ttftOf(adapters[0]!),
      switching: () => ttftOf(adapters[1 + (switches++ % 3)]!),
      firstUse: () => ttftOf(fresh(adapters[switches % 4]!)),
    },
    10 * REPS,
  );
  const ttft = {
    none: t.none.ms!,
    sameAdapter: t.sameAdapter.ms!,
    switching: t.switching.ms!,
    firstUse: t.firstUse.ms!,
  };
  const switchAdded = ttft.switching - ttft.sameAdapter;
  rows.push([
    `10M lora feeds ms: first use / first use, pre-checked / known (switch) / no adapter`,
    `${feeds.first_use.toFixed(2)} / ${feeds.first_use_prechecked.toFixed(2)} / ${feeds.known_switch.toFixed(3)} / ${feeds.no_adapter.toFixed(3)}`,
  ]);
  rows.push([
    `10M time to first token ms: no adapter / same / switched / first use`,
    `${ttft.none.toFixed(1)} / ${ttft.sameAdapter.toFixed(1)} / ${ttft.switching.toFixed(1)} / ${ttft.firstUse.toFixed(1)}`,
  ]);
  const firstUseAdded = ttft.firstUse - ttft.sameAdapter;
  rows.push([
    `10M TTFT added by a switch: known adapter (target < 1 ms) / first use`,
    `${switchAdded.toFixed(2)} / ${firstUseAdded.toFixed(2)} ms`,
  ]);
  await lora.dispose();
  await plain.dispose();

  const peakRssMiB = process.resourceUsage().maxRSS / 1024;
  rows.push(['peak RSS MiB (whole run)', peakRssMiB.toFixed(0)]);

  // Seconds per distillation step of the 135M bundle: bench/real-bundle.ts run on its own.
  const real = await realBundleBench({ steps: false });
  rows.push(...realBundleRows(real));

  Object.assign(results, {
    decode_ms_per_token_10m: decode,
    decode_cpu_ms_per_token_10m: decodeCpu,
    lora_decode_slowdown: slowdown,
    lora_decode_slowdown_cpu: slowdownCpu,
    lora_decode_target_met: slowdown <= 0.1,
    lora_decode_throughput_vs_plain: loraThroughput,
    lora_decode_throughput_vs_plain_cpu: decodeCpu.plain / decodeCpu.r8,
    lora_decode_throughput_target: LORA_TARGET,
    lora_decode_throughput_target_met: loraThroughput >= LORA_TARGET,
    decode_forward_ms_10m: forward,
    batch4_ms: batch,
    batch4_speedup: speedup,
    batch4_target: BATCH_TARGET,
    batch4_target_met: speedup >= BATCH_TARGET,
    lora_feeds_ms_10m: feeds,
    ttft_ms_10m: ttft,
    adapter_switch_added_ms: switchAdded,
    adapter_first_use_added_ms: firstUseAdded,
    adapter_switch_target_met: switchAdded < 1,
    peak_rss_mib: peakRssMiB,
    real_135m: real,
  });
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  const machine = `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, intraOpNumThreads ${defaultThreads() ?? 'ORT default'}, load average ${loadAvg.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`;
  console.log(`machine: ${machine}`);

  const out = join(APP_ROOT, 'bench/results/engine.json');
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  const json = {
    bench: 'engine',
    date: new Date().toISOString(),
    machine,
    cores: availableParallelism(),
    // The 2-core machine is shared with training jobs: ratios measured side by side, under this load.
    load_average: { start: loadAvg, end: loadavg()[0]! },
    settings: { rank: RANK, prompt_tokens: PROMPT, new_tokens: NEW_TOKENS, prefill_tokens: PREFILL, reps: REPS },
    results,
  };
  writeFileSync(`${out}.tmp`, JSON.stringify(json, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
  console.log(`wrote ${out}`);
}

await main();
