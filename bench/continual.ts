// bench/continual: the continual experiment, the HumanEval analogue on SkillWorld.
// Every mode runs `continual.run` (the code the studio and `pskills continual run` use) on the same
// episodes, each in a fresh data folder, one after another in this process (its generations in the
// engine worker, its merges and EMA steps in the algebra worker; process CPU time counts both):
// 32 episodes; each adds a lesson summarised from the episode's verified demos; after each episode the
// held-out tasks of every lesson so far are measured. Prints a table, writes bench/results/continual.json
// and a plot of pass rate against episode (docs/continual.svg). Paired bootstrap over the final
// episode's held-out tasks for merge − independent and cat − linear.
// Run: nice -n 10 node --import tsx bench/continual.ts [--bundle DIR] [--episodes 32] [--tasks T]
//        [--demos 4] [--seed 0] [--modes merge,cat,…] [--probe] [--out FILE.json] [--svg FILE.svg]
//   --probe: 2 episodes per mode; prints seconds per measured task and the projected full run.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONTINUAL_MODES, type ContinualMode, type ContinualRunResult } from '../common/api/continual-schemas';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    bundle: { type: 'string', default: DEFAULT_BUNDLE_DIR },
    episodes: { type: 'string', default: '32' },
    tasks: { type: 'string', default: '1' },
    demos: { type: 'string', default: '4' },
    seed: { type: 'string', default: '0' },
    modes: { type: 'string', default: CONTINUAL_MODES.join(',') },
    probe: { type: 'boolean', default: false },
    out: { type: 'string', default: join(APP_ROOT, 'bench/results/continual.json') },
    svg: { type: 'string', default: join(APP_ROOT, 'docs/continual.svg') },
  },
});
const episodes = values.probe ? 2 : Number(values.episodes);
const tasks = Number(values.tasks);
const modes = values.modes.split(',') as ContinualMode[];
for (const m of modes) if (!CONTINUAL_MODES.includes(m)) throw new Error(`--modes: unknown mode ${m}`);

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function runMode(mode: ContinualMode): Promise<{ result: ContinualRunResult; seconds: number; cpu: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-continual-${mode}-`));
  const studio = createStudio({ dataDir, defaultBundleDir: values.bundle });
  const api = directClient(studioContract, studio.dispatcher);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  try {
    const result = await api.continual.run(
      {
        suite: 'skillworld',
        episodes,
        seed: Number(values.seed),
        mode,
        tasks,
        demos: Number(values.demos),
        summariser: 'template',
      },
      (e) => {
        if (e.type === 'measured')
          process.stderr.write(`  ${mode} episode ${e.episode}: pass rate ${e.passRate.toFixed(3)}\n`);
      },
    ).result;
    const c = process.cpuUsage(c0);
    return { result, seconds: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
  } finally {
    await studio.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** a − b on the final episode's held-out tasks (passed 1, failed 0), paired bootstrap 95 % interval. */
function paired(a: ContinualRunResult, b: ContinualRunResult, ids: string[]) {
  const pa = new Set(a.episodes.at(-1)!.passedTasks);
  const pb = new Set(b.episodes.at(-1)!.passedTasks);
  const d = ids.map((id) => (pa.has(id) ? 1 : 0) - (pb.has(id) ? 1 : 0));
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const rng = seededRng(12345);
  const draws: number[] = [];
  for (let i = 0; i < 2000; i++) draws.push(mean(d.map(() => d[Math.floor(rng() * d.length)]!)));
  draws.sort((x, y) => x - y);
  const ci: [number, number] = [draws[49]!, draws[1949]!];
  return { a: a.mode, b: b.mode, delta: mean(d), ci95: ci, excludes_zero: ci[0] > 0 || ci[1] < 0, n: d.length };
}

const COLORS: Record<ContinualMode, string> = {
  merge: '#1f77b4',
  cat: '#2ca02c',
  linear: '#d62728',
  independent: '#ff7f0e',
  in_context: '#9467bd',
};

/** Pass rate against episode, one line per mode; a hand-written SVG (no chart library in main/). */
function svg(results: ContinualRunResult[], title: string): string {
  const W = 640,
    H = 360,
    L = 56,
    R = 150,
    T = 36,
    B = 44;
  const n = Math.max(...results.map((r) => r.episodes.length));
  const top = Math.max(0.05, ...results.flatMap((r) => r.episodes.map((e) => e.passRate)));
  const ymax = Math.min(1, Math.ceil(top * 20) / 20);
  const x = (ep: number) => L + ((ep - 1) / Math.max(1, n - 1)) * (W - L - R);
  const y = (p: number) => H - B - (p / ymax) * (H - T - B);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="20" font-size="13">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#333"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#333"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">episode</text>`,
    `<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">pass rate (held-out tasks of all lessons so far)</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (ymax * i) / 4;
    parts.push(
      `<line x1="${L - 4}" y1="${y(v)}" x2="${W - R}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${L - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
    );
  }
  for (const ep of [1, ...Array.from({ length: Math.floor(n / 8) }, (_, i) => (i + 1) * 8)].filter((e) => e <= n))
    parts.push(`<text x="${x(ep)}" y="${H - B + 16}" text-anchor="middle">${ep}</text>`);
  results.forEach((r, i) => {
    const points = r.episodes.map((e) => `${x(e.episode).toFixed(1)},${y(e.passRate).toFixed(1)}`).join(' ');
    // Lines that coincide (all at 0) are offset by a pixel each so every mode stays visible.
    parts.push(
      `<polyline fill="none" stroke="${COLORS[r.mode]}" stroke-width="2" points="${points}" transform="translate(0 ${-i})"/>`,
      `<line x1="${W - R + 12}" y1="${T + 10 + i * 18}" x2="${W - R + 32}" y2="${T + 10 + i * 18}" stroke="${COLORS[r.mode]}" stroke-width="2"/>`,
      `<text x="${W - R + 38}" y="${T + 14 + i * 18}">${r.mode} (${r.finalPassRate.toFixed(3)})</text>`,
    );
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}

const runs: { mode: ContinualMode; result: ContinualRunResult; seconds: number; cpu: number }[] = [];
const started = new Date().toISOString();
for (const mode of modes) {
  process.stderr.write(`${mode}…\n`);
  runs.push({ mode, ...(await runMode(mode)) });
}

const measured = (r: ContinualRunResult) => r.episodes.reduce((s, e) => s + e.n, 0);
console.log(
  `continual, ${episodes} episodes, ${values.demos} demos and ${tasks} held-out task(s) per lesson, seed ${values.seed}`,
);
console.log(`bundle ${runs[0]!.result.bundle.id} (${runs[0]!.result.bundle.sha256.slice(0, 12)})`);
console.log(['episode', ...modes].join('\t'));
for (let i = 0; i < episodes; i++)
  console.log([i + 1, ...runs.map((r) => r.result.episodes[i]!.passRate.toFixed(3))].join('\t'));
console.log(['seconds', ...runs.map((r) => r.seconds.toFixed(0))].join('\t'));
console.log(['s/task', ...runs.map((r) => (r.seconds / measured(r.result)).toFixed(3))].join('\t'));
console.log(['cpu s', ...runs.map((r) => r.cpu.toFixed(1))].join('\t'));
console.log(['cpu s/task', ...runs.map((r) => (r.cpu / measured(r.result)).toFixed(3))].join('\t'));
if (values.probe) {
  const full = (32 * 33) / 2; // tasks measured per held-out task per lesson over 32 episodes
  for (const t of [1, 2, 4]) {
    const s = runs.reduce((acc, r) => acc + (r.seconds / measured(r.result)) * full * t, 0);
    const c = runs.reduce((acc, r) => acc + (r.cpu / measured(r.result)) * full * t, 0);
    console.log(
      `projected 32 episodes at --tasks ${t}: ${(s / 60).toFixed(1)} min wall, ${(c / 60).toFixed(1)} min CPU (all modes)`,
    );
  }
  process.exit(0);
}

const byMode = new Map(runs.map((r) => [r.mode, r.result]));
const ids = runs[0]!.result.episodes.at(-1)!.n ? plannedIds(runs[0]!.result) : [];
function plannedIds(r: ContinualRunResult): string[] {
  // Every mode measured the same final tasks (same seed): the ids some mode passed, and one
  // placeholder per task that no mode passed (a 0 − 0 pair).
  const union = new Set(runs.flatMap((x) => x.result.episodes.at(-1)!.passedTasks));
  return [...union, ...Array.from({ length: r.episodes.at(-1)!.n - union.size }, (_, i) => `failed-everywhere-${i}`)];
}
const comparisons = (
  [
    ['merge', 'independent'],
    ['cat', 'linear'],
    ['merge', 'in_context'],
  ] as const
)
  .filter(([a, b]) => byMode.has(a) && byMode.has(b))
  .map(([a, b]) => paired(byMode.get(a)!, byMode.get(b)!, ids));
for (const c of comparisons)
  console.log(
    `${c.a} − ${c.b} at episode ${episodes}: ${c.delta.toFixed(3)} [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}] over ${c.n} tasks`,
  );

writeAtomic(
  values.out,
  JSON.stringify(
    {
      bench: 'continual',
      started,
      command: `node --import tsx bench/continual.ts ${process.argv.slice(2).join(' ')}`,
      bundle: runs[0]!.result.bundle,
      settings: { ...runs[0]!.result.settings, episodes, seed: Number(values.seed) },
      machine: { cpu: cpus()[0]?.model ?? '', cores: cpus().length, load_average: loadavg() },
      modes: Object.fromEntries(
        runs.map((r) => [
          r.mode,
          {
            final_pass_rate: r.result.finalPassRate,
            seconds: r.seconds,
            cpu_seconds: r.cpu,
            tasks_measured: measured(r.result),
            episodes: r.result.episodes.map((e) => ({
              episode: e.episode,
              world: e.world,
              pass_rate: e.passRate,
              passed: e.passed,
              n: e.n,
              global_version: e.globalVersion,
              truncated: e.truncated,
              passed_tasks: e.passedTasks,
            })),
          },
        ]),
      ),
      comparisons,
    },
    null,
    1,
  ) + '\n',
);
writeAtomic(
  values.svg,
  svg(
    runs.map((r) => r.result),
    `SkillWorld continual: ${episodes} lessons, ${tasks} held-out task(s) each, bundle ${runs[0]!.result.bundle.id} (${runs[0]!.result.bundle.sha256.slice(0, 12)})`,
  ),
);
console.log(`wrote ${values.out} and ${values.svg}`);
