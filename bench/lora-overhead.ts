// bench/lora-overhead: what one decode forward of the ~10M random model pays for LoRA inputs, per
// graph layout: the plain export (no LoRA inputs), per-module inputs on all seven targets, the same
// packed into two tensors, and per-module inputs on q and v only. Raw Session.run (the engine's checked path,
// nothing else), batch 1, past 32, runs interleaved, medians.
// Run: node --import tsx bench/lora-overhead.ts   (after bench/engine.ts has written its bundles)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Session, float32, int64, type Tensor } from '../main/engine/ort';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';

const B10M = join(APP_ROOT, '.cache/bench-bundle-10m');
const VARIANTS = join(APP_ROOT, '.cache/bench-lora-variants');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const PAST = 32;
const RANK = 8;
const RUNS = 200; // forwards per sample
const REPS = 9;

if (!existsSync(`${B10M}-plain/lm.onnx`)) throw new Error(`run bench/engine.ts first (it writes ${B10M}-plain)`);
if (!existsSync(join(VARIANTS, 'nodes.json'))) {
  const r = spawnSync(PYTHON, [join(APP_ROOT, 'bench/lora-variants.py'), `${B10M}-plain/lm.onnx`, VARIANTS], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('bench/lora-variants.py failed');
}

const rng = seededRng(1);
function feeds(s: Session, rank: number): Record<string, Tensor> {
  const f: Record<string, Tensor> = {};
  for (const { name, dims } of s.inputs) {
    const size = (d: readonly number[]) => d.reduce((a, b) => a * b, 1);
    const rand = (d: number[], scale: number) =>
      float32(
        Float32Array.from({ length: size(d) }, () => (rng() - 0.5) * scale),
        d,
      );
    if (name === 'input_ids') f[name] = int64([11], [1, 1]);
    else if (name === 'attention_mask') f[name] = int64(Array<number>(PAST + 1).fill(1), [1, PAST + 1]);
    else if (name === 'position_ids') f[name] = int64([PAST], [1, 1]);
    else if (name.startsWith('past_key_values')) f[name] = rand([1, dims[1] as number, PAST, dims[3] as number], 1);
    else if (name.startsWith('lora'))
      f[name] = rand(
        dims.map((d, i) => (i === 0 ? 1 : typeof d === 'number' ? d : rank)),
        0.02,
      );
    else throw new Error(`unexpected input ${name}`);
  }
  return f;
}

const graphs = {
  plain: `${B10M}-plain/lm.onnx`,
  all7: join(VARIANTS, 'all7.onnx'),
  packed: join(VARIANTS, 'packed.onnx'),
  qv: join(VARIANTS, 'qv.onnx'),
};
const cases: Record<string, () => Promise<unknown>> = {};
for (const [name, file] of Object.entries(graphs)) {
  const s = await Session.open(file);
  const fetch = s.outputs.map((o) => o.name).filter((n) => n === 'logits' || n.startsWith('present'));
  for (const r of name === 'plain' ? [0] : [0, RANK]) {
    const f = feeds(s, r);
    cases[name === 'plain' ? name : `${name} r${r}`] = () => s.run(f, fetch);
  }
}
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
const loadBefore = loadavg()[0]!;
for (let rep = -1; rep < REPS; rep++) {
  for (const [k, run] of Object.entries(cases)) {
    const t0 = performance.now();
    for (let i = 0; i < RUNS; i++) await run();
    if (rep >= 0) samples[k]!.push((performance.now() - t0) / RUNS); // rep -1 warms up
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const ms = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
const nodes = JSON.parse(readFileSync(join(VARIANTS, 'nodes.json'), 'utf8')) as Record<
  string,
  { nodes: number; inputs: number; matmul: number }
>;
console.log('graph            nodes  inputs   ms/forward   vs plain');
for (const [k, v] of Object.entries(ms)) {
  const n = nodes[k.split(' ')[0]!]!;
  console.log(
    `${k.padEnd(15)} ${String(n.nodes).padStart(6)} ${String(n.inputs).padStart(7)} ${v.toFixed(3).padStart(12)} ${(k === 'plain' ? '' : `${(100 * (v / ms.plain! - 1)).toFixed(1)} %`).padStart(10)}`,
  );
}
const machine = `${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, load average ${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`;
console.log(`machine: ${machine}`);
const out = join(APP_ROOT, 'bench/results/lora-overhead.json');
mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
const slowdown = Object.fromEntries(
  Object.entries(ms)
    .filter(([k]) => k !== 'plain')
    .map(([k, v]) => [k, v / ms.plain! - 1]),
);
writeFileSync(
  `${out}.tmp`,
  JSON.stringify(
    {
      bench: 'lora-overhead',
      date: new Date().toISOString(),
      machine,
      settings: { past: PAST, rank: RANK, runs: RUNS, reps: REPS },
      nodes,
      ms_per_forward: ms,
      slowdown_vs_plain: slowdown,
    },
    null,
    2,
  ) + '\n',
);
renameSync(`${out}.tmp`, out);
console.log(`wrote ${out}`);
