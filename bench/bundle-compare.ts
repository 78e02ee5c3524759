// bench/bundle-compare: two bundle folders of the same model (e.g. before and after
// `python -m pskills_train.export.reexport`), decode speed side by side in one process, runs interleaved.
// Run: node --import tsx bench/bundle-compare.ts OLD_DIR NEW_DIR
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { LoraPair, TargetKey } from '../main/adapters/types';
import { engineAdapter, generateBatch, loadBundle, type Bundle, type EngineAdapter } from '../main/engine';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';

const RANK = 8;
const NEW_TOKENS = 64;
const LONG_PROMPT = 1000;
const REPS = 9;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function randomAdapter(b: Bundle, seed: number): EngineAdapter {
  const rng = seededRng(seed);
  const targets = new Map<TargetKey, LoraPair>();
  for (const layer of b.manifest.lora.layers)
    for (const { module, d_in, d_out } of b.manifest.lora.targets) {
      const A = Float32Array.from({ length: d_in * RANK }, () => (rng() - 0.5) / Math.sqrt(d_in));
      const B = Float32Array.from({ length: RANK * d_out }, () => (rng() - 0.5) * 0.04);
      targets.set(`${layer}.${module}`, { dIn: d_in, dOut: d_out, A, B });
    }
  return engineAdapter(RANK, targets);
}

interface Case {
  adapters: (EngineAdapter | null)[];
  prompt: number;
  newTokens: number;
}

/** ms per generated token (wall) of one generation; the tokens, to check both bundles agree. */
async function run(b: Bundle, { adapters, prompt, newTokens }: Case) {
  const requests = adapters.map((adapter, i) => ({
    prompt: Array.from({ length: prompt }, (_, k) => 10 + ((k * 7 + i * 3) % 1000)),
    adapter,
    maxNewTokens: newTokens,
    stopTokenIds: [],
  }));
  const tokens: number[][] = adapters.map(() => []);
  const t0 = performance.now();
  for await (const e of generateBatch(b, requests)) tokens[e.row]!.push(e.tokenId);
  return { ms: (performance.now() - t0) / newTokens, tokens };
}

async function main() {
  const [oldDir, newDir] = process.argv.slice(2);
  if (!oldDir || !newDir) throw new Error('usage: bench/bundle-compare.ts OLD_DIR NEW_DIR');
  const load0 = loadavg()[0]!;
  const bundles = { old: await loadBundle(oldDir), new: await loadBundle(newDir) };
  const ads = Object.fromEntries(
    Object.entries(bundles).map(([k, b]) => [k, [1, 2, 3, 4].map((s) => randomAdapter(b, s))]),
  ) as Record<'old' | 'new', EngineAdapter[]>;
  type Side = 'old' | 'new';
  const decode = (adapters: (EngineAdapter | null)[]): Case => ({ adapters, prompt: 16, newTokens: NEW_TOKENS });
  // A long prompt and one token: the time to the first token, where logits for every position cost most.
  const longPrompt = Math.min(LONG_PROMPT, bundles.old.manifest.architecture.max_positions - 1);
  const cases: Record<string, (k: Side) => Case> = {
    'batch 1, no adapter': () => decode([null]),
    [`batch 1, r = ${RANK}`]: (k) => decode([ads[k][0]!]),
    [`batch 4, four r = ${RANK} adapters`]: (k) => decode(ads[k]),
    [`first token of a ${longPrompt}-token prompt, r = ${RANK}`]: (k) => ({
      adapters: [ads[k][0]!],
      prompt: longPrompt,
      newTokens: 1,
    }),
  };
  // Every case on both bundles once (warm-up, and the tokens to compare), then REPS rounds of all of them.
  const names = Object.keys(cases);
  const same: Record<string, boolean> = {};
  for (const name of names) {
    const [a, b] = [await run(bundles.old, cases[name]!('old')), await run(bundles.new, cases[name]!('new'))];
    same[name] = JSON.stringify(a.tokens) === JSON.stringify(b.tokens);
  }
  const times: Record<string, { old: number[]; new: number[] }> = {};
  for (let i = 0; i < REPS; i++)
    for (const name of names)
      for (const k of ['old', 'new'] as const)
        (times[name] ??= { old: [], new: [] })[k].push((await run(bundles[k], cases[name]!(k))).ms);
  const rows: Record<string, Record<string, number>> = {};
  for (const name of names)
    rows[name] = {
      old_ms_per_step: median(times[name]!.old),
      new_ms_per_step: median(times[name]!.new),
      same_tokens: +same[name]!,
    };
  await bundles.old.dispose();
  await bundles.new.dispose();
  const head = 'ms per step (median; a 1-token case: the whole call)';
  const w = Math.max(head.length, ...Object.keys(rows).map((k) => k.length));
  console.log(`${head.padEnd(w)}  old     new     new/old  same tokens`);
  for (const [k, r] of Object.entries(rows))
    console.log(
      `${k.padEnd(w)}  ${r.old_ms_per_step!.toFixed(2).padEnd(7)} ${r.new_ms_per_step!.toFixed(2).padEnd(7)} ${(r.new_ms_per_step! / r.old_ms_per_step!).toFixed(3)}    ${r.same_tokens ? 'yes' : 'NO'}`,
    );
  const machine = `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`;
  console.log(`machine: ${machine}`);
  const out = join(APP_ROOT, 'bench/results/bundle-compare.json');
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  const json = {
    bench: 'bundle-compare',
    date: new Date().toISOString(),
    machine,
    old: oldDir,
    new: newDir,
    reps: REPS,
    rows,
  };
  writeFileSync(`${out}.tmp`, JSON.stringify(json, null, 2) + '\n');
  renameSync(`${out}.tmp`, out);
  console.log(`wrote ${out}`);
}

await main();
