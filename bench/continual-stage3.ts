// bench/continual-stage3: the continual experiment on distilled lessons, from `pskills continual run
// --json` outputs (one file per mode and seed, the code the studio runs). Prints the table of final
// pass rates per seed and mode, paired differences between modes with 95 % CIs (a paired bootstrap over
// seeds, and one over the final episode's held-out tasks pooled across seeds), and writes the plot of
// mean pass rate against episode, mode against mode (an SVG, each seed a faint line).
// Run: node --import tsx bench/continual-stage3.ts [--dir bench/results/continual-stage3] [--prefix ''] [--svg docs/continual-stage3.svg]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seededRng } from '../main/engine/sampler';
import { APP_ROOT } from '../main/paths';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: join(APP_ROOT, 'bench/results/continual-stage3') },
    prefix: { type: 'string', default: '' },
    svg: { type: 'string', default: join(APP_ROOT, 'docs/continual-stage3.svg') },
    title: { type: 'string', default: 'distilled lessons, 40 steps' },
  },
});

interface Run {
  mode: string;
  seed: number;
  final_pass_rate: number;
  episodes: { episode: number; pass_rate: number; n: number; passed_tasks: string[] }[];
  settings: { steps: number | null; tier: string };
}

const name = new RegExp(`^${values.prefix}(merge|independent|linear|cat|in_context)-s(\\d+)\\.json$`);
const runs: Run[] = readdirSync(values.dir)
  .filter((f) => name.test(f))
  .map((f) => JSON.parse(readFileSync(join(values.dir, f), 'utf8')) as Run);
const modes = [...new Set(runs.map((r) => r.mode))].sort((a, b) =>
  a === 'merge' ? -1 : b === 'merge' ? 1 : a.localeCompare(b),
);
const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
const get = (mode: string, seed: number) => runs.find((r) => r.mode === mode && r.seed === seed);
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

/** Percentile bootstrap of the mean of paired differences. */
function ci(d: readonly number[], draws = 10_000): [number, number] {
  const rnd = seededRng(0);
  const means: number[] = [];
  for (let b = 0; b < draws; b++) {
    let s = 0;
    for (let i = 0; i < d.length; i++) s += d[Math.floor(rnd() * d.length)]!;
    means.push(s / d.length);
  }
  means.sort((a, b) => a - b);
  return [means[Math.floor(0.025 * draws)]!, means[Math.floor(0.975 * draws)]!];
}

const fmt = (x: number) => x.toFixed(3);
console.log(`| seed | ${modes.join(' | ')} |`);
console.log(`|---|${modes.map(() => '---').join('|')}|`);
for (const s of seeds)
  console.log(`| ${s} | ${modes.map((m) => (get(m, s) ? fmt(get(m, s)!.final_pass_rate) : '—')).join(' | ')} |`);
console.log(
  `| mean | ${modes.map((m) => fmt(mean(seeds.flatMap((s) => get(m, s)?.final_pass_rate ?? [])))).join(' | ')} |`,
);
console.log('');
console.log('| pair | mean Δ final (seeds) | 95 % CI over seeds | Δ pooled tasks | 95 % CI over tasks | tasks |');
console.log('|---|---|---|---|---|---|');
for (const b of modes.filter((m) => m !== 'merge')) {
  const paired = seeds.filter((s) => get('merge', s) && get(b, s));
  const d = paired.map((s) => get('merge', s)!.final_pass_rate - get(b, s)!.final_pass_rate);
  // Task level: every final held-out task of each seed, 1 if passed, paired between the modes.
  const t: number[] = [];
  for (const s of paired) {
    const ea = get('merge', s)!.episodes.at(-1)!;
    const eb = get(b, s)!.episodes.at(-1)!;
    const pa = new Set(ea.passed_tasks);
    const pb = new Set(eb.passed_tasks);
    const ids = new Set([...pa, ...pb]);
    for (const id of ids) t.push((pa.has(id) ? 1 : 0) - (pb.has(id) ? 1 : 0));
    for (let k = ids.size; k < ea.n; k++) t.push(0); // tasks neither passed
  }
  const [lo, hi] = ci(d);
  const [tlo, thi] = ci(t);
  console.log(
    `| merge − ${b} | ${fmt(mean(d))} | [${fmt(lo)}, ${fmt(hi)}] | ${fmt(mean(t))} | [${fmt(tlo)}, ${fmt(thi)}] | ${t.length} |`,
  );
}

// The plot: mean pass rate per episode per mode (thick), each seed's run (thin).
const COLORS: Record<string, string> = {
  merge: '#1f77b4',
  independent: '#d62728',
  linear: '#2ca02c',
  cat: '#9467bd',
  in_context: '#ff7f0e',
};
const W = 640;
const H = 340;
const L = 50;
const R = 170;
const T = 30;
const B = 40;
const maxEp = Math.max(2, ...runs.flatMap((r) => r.episodes.map((e) => e.episode)));
const x = (ep: number) => L + ((ep - 1) / (maxEp - 1)) * (W - L - R);
const y = (rate: number) => T + (1 - rate) * (H - T - B);
const line = (pts: [number, number][]) => pts.map(([e, r]) => `${x(e).toFixed(1)},${y(r).toFixed(1)}`).join(' ');
const out: string[] = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
  `<rect width="${W}" height="${H}" fill="white"/>`,
  `<text x="${L}" y="16" font-size="12">Held-out pass rate, skills seen so far (${values.title}; ${seeds.length} seeds)</text>`,
];
for (const v of [0, 0.25, 0.5, 0.75, 1])
  out.push(
    `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
    `<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
  );
for (let e = 1; e <= maxEp; e++) out.push(`<text x="${x(e)}" y="${H - B + 16}" text-anchor="middle">${e}</text>`);
out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">episode</text>`);
modes.forEach((m, i) => {
  const c = COLORS[m] ?? '#444';
  for (const s of seeds) {
    const r = get(m, s);
    if (r)
      out.push(
        `<polyline fill="none" stroke="${c}" stroke-opacity="0.25" stroke-width="1" points="${line(r.episodes.map((e) => [e.episode, e.pass_rate]))}"/>`,
      );
  }
  const pts: [number, number][] = [];
  for (let e = 1; e <= maxEp; e++) {
    const xs = seeds.flatMap((s) => get(m, s)?.episodes.find((q) => q.episode === e)?.pass_rate ?? []);
    if (xs.length) pts.push([e, mean(xs)]);
  }
  out.push(`<polyline fill="none" stroke="${c}" stroke-width="2.5" points="${line(pts)}"/>`);
  const fin = mean(seeds.flatMap((s) => get(m, s)?.final_pass_rate ?? []));
  out.push(
    `<line x1="${W - R + 12}" x2="${W - R + 32}" y1="${T + 10 + i * 18}" y2="${T + 10 + i * 18}" stroke="${c}" stroke-width="2.5"/>`,
    `<text x="${W - R + 38}" y="${T + 14 + i * 18}">${m} (final ${fin.toFixed(3)})</text>`,
  );
});
out.push('</svg>');
writeFileSync(values.svg, out.join('\n') + '\n');
console.log(`\nwrote ${values.svg}`);
