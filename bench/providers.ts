// bench/providers: one bundle on each execution provider asked for, against cpu in the same process:
// last-position logits parity (no adapter and a random rank-8 adapter, target ≤ 1e-3), encoder-state
// parity, prefill ms and greedy decode tokens/s. What scripts/device-check.sh runs on a GPU machine.
// Run: node --import tsx bench/providers.ts [--bundle DIR] [--providers cuda,webgpu] [--tokens 64]
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { engineAdapter, generateAll, loadBundle, type Bundle, type EngineAdapter } from '../main/engine';
import { KvCache } from '../main/engine/kv-cache';
import type { Provider } from '../main/engine/ort';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    bundle: { type: 'string' },
    providers: { type: 'string', default: 'cuda,webgpu' },
    tokens: { type: 'string', default: '64' },
    out: { type: 'string' },
  },
});
const DIR = values.bundle ? resolve(values.bundle) : DEFAULT_BUNDLE_DIR;
const TOKENS = Number(values.tokens);
const PROMPT =
  'The program reads its configuration file when it starts. If the file is missing, the default values are used.';

function randomAdapter(b: Bundle, rank: number): EngineAdapter {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 0.05;
  const targets = new Map();
  for (const layer of b.manifest.lora.layers)
    for (const { module, d_in: dIn, d_out: dOut } of b.manifest.lora.targets)
      targets.set(`${layer}.${module}`, {
        dIn,
        dOut,
        A: Float32Array.from({ length: dIn * rank }, rnd),
        B: Float32Array.from({ length: rank * dOut }, rnd),
      });
  return engineAdapter(rank, targets);
}

async function measure(b: Bundle) {
  const ids = b.tokenizer.encode(PROMPT);
  const vocab = b.manifest.architecture.vocab;
  const last: Record<string, Float32Array> = {};
  let prefillMs = 0;
  for (const [name, ad] of [
    ['none', null],
    ['r8', randomAdapter(b, 8)],
  ] as const) {
    const t0 = performance.now();
    const { logits } = await b.lm.forward({
      batch: 1,
      inputIds: ids,
      positionIds: ids.map((_, i) => i),
      attentionMask: ids.map(() => 1),
      cache: KvCache.empty(b.manifest, 1),
      lora: b.lm.loraFeeds([ad]),
    });
    if (name === 'none') prefillMs = performance.now() - t0;
    last[name] = logits.slice((ids.length - 1) * vocab);
  }
  const states = (await b.encoder.encodeBatch([ids]))[0]!;
  await generateAll(b, [{ prompt: ids, maxNewTokens: 4, stopTokenIds: [] }]); // warm-up
  const t0 = performance.now();
  const [r] = await generateAll(b, [{ prompt: ids, maxNewTokens: TOKENS, stopTokenIds: [] }]);
  const tokensPerS = (r!.tokens.length * 1000) / (performance.now() - t0);
  return { last, states, prefillMs, tokensPerS, tokens: r!.tokens };
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

const cpuBundle = await loadBundle(DIR, { provider: 'cpu' });
const cpu = await measure(cpuBundle);
await cpuBundle.dispose();
const rows: Record<string, unknown>[] = [
  { provider: 'cpu', used: 'cpu', prefill_ms: cpu.prefillMs, tokens_per_s: cpu.tokensPerS },
];
let ok = true;
for (const p of values.providers!.split(',').filter(Boolean) as Provider[]) {
  const b = await loadBundle(DIR, { provider: p, logger: () => {} });
  const info = b.provider;
  const m = await measure(b);
  await b.dispose();
  const logits = Math.max(maxDiff(m.last.none!, cpu.last.none!), maxDiff(m.last.r8!, cpu.last.r8!));
  const states = maxDiff(m.states, cpu.states);
  const same = m.tokens.filter((t, i) => t === cpu.tokens[i]).length;
  const parity = info.used === p && logits <= 1e-3;
  if (info.used === p) ok &&= parity;
  rows.push({
    provider: p,
    used: info.used,
    fallback: info.fallback,
    max_abs_logit_diff: logits,
    max_abs_state_diff: states,
    greedy_tokens_equal: `${same}/${cpu.tokens.length}`,
    parity_met: parity,
    prefill_ms: m.prefillMs,
    tokens_per_s: m.tokensPerS,
    vs_cpu: m.tokensPerS / cpu.tokensPerS,
  });
}
for (const r of rows) console.log(JSON.stringify(r));
const out = values.out ? resolve(values.out) : join(APP_ROOT, 'bench/results/providers.json');
mkdirSync(join(out, '..'), { recursive: true });
const json = {
  bench: 'providers',
  date: new Date().toISOString(),
  machine: `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}`,
  load_average: loadavg()[0],
  bundle: DIR,
  decode_tokens: TOKENS,
  results: rows,
};
writeFileSync(`${out}.tmp`, JSON.stringify(json, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
console.log(`wrote ${out}`);
process.exitCode = ok ? 0 : 1;
