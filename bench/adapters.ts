// bench/adapters: merge and EMA cost of the adapter algebra on two shapes — (a) the default bundle's
// LoRA targets (resources/bundles/default/bundle.json; the flags below override or stand in when it
// is absent), (b) synthetic factors shaped like a 0.5B model (q and v only).
// Each (shape, op) runs in its own child process so its peak RSS is its own.
// Run: node --import tsx bench/adapters.ts [--hidden=256 --layers=8 --intermediate=768 --kv-dim=128 --runs=7]
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emaStep } from '../main/adapters/ema';
import { cat } from '../main/adapters/merge';
import { linearBaselineError } from '../main/adapters/stats';
import { svdMerge } from '../main/adapters/svd';
import { targetKey, type Adapter, type LoraPair, type TargetKey } from '../main/adapters/types';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

interface Module {
  name: string;
  dIn: number;
  dOut: number;
}
interface Shape {
  id: string;
  layers: number;
  modules: Module[];
}

const args = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=') as [string, string]),
);
const num = (name: string, dflt: number) => (args.has(name) ? Number(args.get(name)) : dflt);

function bundleShape({ hidden = 256, layers = 8, intermediate = 768, kvDim = 128 } = {}): Shape {
  const m = (name: string, dIn: number, dOut: number) => ({ name, dIn, dOut });
  const modules = [
    m('q', hidden, hidden),
    m('k', hidden, kvDim),
    m('v', hidden, kvDim),
    m('o', hidden, hidden),
    m('gate', hidden, intermediate),
    m('up', hidden, intermediate),
    m('down', intermediate, hidden),
  ];
  return { id: `bundle h${hidden} L${layers}`, layers, modules };
}

/** The default bundle's targets as its bundle.json lists them, unless shape flags are given. */
function defaultBundleShape(): Shape | null {
  const file = join(DEFAULT_BUNDLE_DIR, 'bundle.json');
  if (['hidden', 'layers', 'intermediate', 'kv-dim'].some((k) => args.has(k)) || !existsSync(file)) return null;
  const m = JSON.parse(readFileSync(file, 'utf8')) as {
    id: string;
    lora: { layers: number[]; targets: { module: string; d_in: number; d_out: number }[] };
  };
  const modules = m.lora.targets.map((t) => ({ name: t.module, dIn: t.d_in, dOut: t.d_out }));
  return {
    id: `default (${m.id}) h${modules[0]!.dIn} L${m.lora.layers.length}`,
    layers: m.lora.layers.length,
    modules,
  };
}

const shapes: Shape[] = [
  defaultBundleShape() ??
    bundleShape({
      hidden: num('hidden', 256),
      layers: num('layers', 8),
      intermediate: num('intermediate', 768),
      kvDim: num('kv-dim', 128),
    }),
  {
    id: '0.5B h896 L24 q,v',
    layers: 24,
    modules: [
      { name: 'q', dIn: 896, dOut: 896 },
      { name: 'v', dIn: 896, dOut: 128 },
    ],
  },
];
const ADAPTERS = 8;
const RANK = 8;
const SVD_RANK = 16;
const RUNS = num('runs', 7);

function randomAdapter(shape: Shape, seed: number): Adapter {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
  const targets = new Map<TargetKey, LoraPair>();
  for (let layer = 0; layer < shape.layers; layer++) {
    for (const { name, dIn, dOut } of shape.modules) {
      const A = Float32Array.from({ length: dIn * RANK }, () => next() / Math.sqrt(dIn));
      const B = Float32Array.from({ length: RANK * dOut }, () => 0.02 * next());
      targets.set(targetKey(layer, name), { dIn, dOut, A, B });
    }
  }
  return { rank: RANK, alpha: 2 * RANK, targets };
}

const OPS = {
  cat: { label: `cat ${ADAPTERS}×r${RANK}`, outRank: ADAPTERS * RANK },
  svd: { label: `svd ${ADAPTERS}×r${RANK} → ${SVD_RANK}`, outRank: SVD_RANK },
  ema: { label: `ema step (r${SVD_RANK} + r${RANK} → ${SVD_RANK})`, outRank: SVD_RANK },
  linearError: { label: `‖linear − cat‖/‖cat‖`, outRank: RANK },
} as const;
type Op = keyof typeof OPS;

interface Measured {
  shape: string;
  op: Op;
  targets: number;
  runs: number;
  medianMs: number;
  minMs: number;
  medianCpuMs: number;
  baselineRssMiB: number;
  peakRssMiB: number;
  linearRelError?: number;
}

const maxRssMiB = () => process.resourceUsage().maxRSS / 1024;

function child(shape: Shape, op: Op): Measured {
  const list = Array.from({ length: ADAPTERS }, (_, i) => randomAdapter(shape, 1000 + i));
  const w = list.map(() => 1 / ADAPTERS);
  const global = svdMerge(list, w, SVD_RANK);
  let linearRelError: number | undefined;
  const run = {
    cat: () => cat(list, w),
    svd: () => svdMerge(list, w, SVD_RANK),
    ema: () => emaStep(global, list[0]!, 0.1, SVD_RANK),
    linearError: () => (linearRelError = linearBaselineError(list, w).overall),
  }[op];
  const baselineRssMiB = maxRssMiB();
  run();
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    run();
    times.push(performance.now() - t);
    cpu.push(process.cpuUsage(c).user / 1000);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const out: Measured = {
    shape: shape.id,
    op,
    targets: shape.layers * shape.modules.length,
    runs: RUNS,
    medianMs: median(times),
    minMs: Math.min(...times),
    medianCpuMs: median(cpu),
    baselineRssMiB,
    peakRssMiB: maxRssMiB(),
  };
  return linearRelError === undefined ? out : { ...out, linearRelError };
}

if (args.has('child')) {
  const [shapeIdx, op] = args.get('child')!.split(',') as [string, Op];
  console.log(JSON.stringify(child(shapes[Number(shapeIdx)]!, op)));
} else {
  const self = fileURLToPath(import.meta.url);
  const rows: Measured[] = [];
  const loadBefore = loadavg()[0]!;
  shapes.forEach((_, i) => {
    for (const op of Object.keys(OPS) as Op[]) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', self, ...process.argv.slice(2), `--child=${i},${op}`], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`child ${i},${op} failed: ${r.stderr}`);
      rows.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as Measured);
    }
  });
  const head = ['shape', 'op', 'out r', 'targets', 'median ms', 'min ms', 'cpu ms', 'peak RSS MiB', 'Δ RSS MiB'];
  const table = rows.map((r) => [
    r.shape,
    OPS[r.op].label,
    String(OPS[r.op].outRank),
    String(r.targets),
    r.medianMs.toFixed(1),
    r.minMs.toFixed(1),
    r.medianCpuMs.toFixed(1),
    r.peakRssMiB.toFixed(0),
    (r.peakRssMiB - r.baselineRssMiB).toFixed(1),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...table.map((row) => row[c]!.length)));
  const line = (cells: string[]) =>
    cells.map((s, c) => (c < 2 ? s.padEnd(widths[c]!) : s.padStart(widths[c]!))).join('  ');
  console.log(line(head));
  for (const row of table) console.log(line(row));
  for (const r of rows.filter((x) => x.linearRelError !== undefined)) {
    console.log(
      `${r.shape}: linear baseline relative error vs exact sum (${ADAPTERS} adapters, equal weights) = ${r.linearRelError!.toFixed(4)}`,
    );
  }
  console.log(
    `machine: ${cpus().length}× ${cpus()[0]?.model ?? '?'}, node ${process.version}, load average (1 min) ${loadBefore.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
  );
  const result = {
    bench: 'adapters',
    date: new Date().toISOString(),
    // Wall times on a shared machine move with its load; cpu ms (user time, median) moves less.
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      node: process.version,
      loadAverage1m: { before: loadBefore, after: loadavg()[0]! },
    },
    params: { adapters: ADAPTERS, rank: RANK, svdRank: SVD_RANK, emaBeta: 0.1, runs: RUNS, shapes },
    rows,
  };
  mkdirSync(join(APP_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(APP_ROOT, 'bench', 'results', 'adapters.json'), JSON.stringify(result, null, 2) + '\n');
}
