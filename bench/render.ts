// bench/render: how long the Library and Adapters pages take to render with 1,000 skills and 1,000
// adapters in the library (under 200 ms). The library is written into a fresh data folder
// (tests/e2e/scale-library.ts), `pskills serve` opens it and Chromium loads the studio. Each round
// clicks the sidebar link of one page, then of the other; a sample is the time from the click to the
// first frame that shows the page's table (drawn), and to the frame after the page's own refresh of
// the list (settled); tests/e2e/render-timing.ts defines both. A cold load (the whole studio booting
// on that page, to settled) is timed too. Needs the built renderer (npx electron-vite build) and /usr/bin/chromium.
// Run: node --import tsx bench/render.ts [--rounds 10] [--skills 1000] [--adapters 1000]
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { APP_ROOT } from '../main/paths';
import { openStudio } from '../tests/e2e/harness';
import { median, timeNavigation, type RenderSample, type RenderTarget } from '../tests/e2e/render-timing';
import { fillScaleLibrary } from '../tests/e2e/scale-library';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    skills: { type: 'string', default: '1000' },
    adapters: { type: 'string', default: '1000' },
  },
});
const ROUNDS = Number(values.rounds);
const COUNTS = { skills: Number(values.skills), adapters: Number(values.adapters) };
const TARGET_MS = 200;

const PAGES: { name: string; route: string; target: RenderTarget }[] = [
  {
    name: 'Library',
    route: '#/library',
    target: { nav: 'nav-library', table: 'skill-table', row: 'skill-row', total: COUNTS.skills },
  },
  {
    name: 'Adapters',
    route: '#/adapters',
    target: { nav: 'nav-adapters', table: 'adapter-table', row: 'adapter-row', total: COUNTS.adapters },
  },
];

const quantile = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};
const round1 = (x: number) => Math.round(x * 10) / 10;

const loadBefore = loadavg()[0]!;
const studio = await openStudio((dir) => void fillScaleLibrary(dir, COUNTS));
const { page, host } = studio;
page.setDefaultTimeout(120_000);
const results = [];
try {
  const cold = new Map<string, number>();
  for (const p of PAGES) {
    // The first load warms the browser's and the host's caches; the second is the one reported.
    for (let k = 0; k < 2; k++) {
      await page.goto('about:blank');
      await page.goto(`${host.url}${p.route}`, { waitUntil: 'domcontentloaded' });
      cold.set(p.name, (await timeNavigation(page, { ...p.target, nav: null })).settledMs);
    }
  }
  const samples = new Map<string, RenderSample[]>(PAGES.map((p) => [p.name, []]));
  // The page's main-thread CPU time (Chrome's ThreadTime metric) around each sample: what the render
  // costs, less sensitive than wall time to other processes on a loaded machine.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const threadTime = async () =>
    (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ThreadTime')?.value ?? NaN;
  const cpu = new Map<string, number[]>(PAGES.map((p) => [p.name, []]));
  await timeNavigation(page, PAGES[0]!.target); // warm-up: both pages once
  await timeNavigation(page, PAGES[1]!.target);
  for (let r = 0; r < ROUNDS; r++) {
    for (const p of PAGES) {
      const before = await threadTime();
      samples.get(p.name)!.push(await timeNavigation(page, p.target));
      cpu.get(p.name)!.push(((await threadTime()) - before) * 1000);
    }
  }
  for (const p of PAGES) {
    const ms = samples.get(p.name)!.map((s) => s.ms);
    const last = samples.get(p.name)!.at(-1)!;
    results.push({
      page: p.name,
      rows: p.target.total,
      rows_in_dom: last.rowsInDom,
      windowed: last.windowed,
      samples: ms.length,
      median_ms: round1(median(ms)),
      settled_median_ms: round1(median(samples.get(p.name)!.map((s) => s.settledMs))),
      main_thread_cpu_median_ms: round1(median(cpu.get(p.name)!)),
      p90_ms: round1(quantile(ms, 0.9)),
      min_ms: round1(Math.min(...ms)),
      max_ms: round1(Math.max(...ms)),
      cold_load_ms: round1(cold.get(p.name)!),
      target_ms: TARGET_MS,
      met: median(ms) < TARGET_MS,
    });
  }
} finally {
  await studio.close();
}

const chromium = process.env.PSKILLS_CHROMIUM ?? '/usr/bin/chromium';
const header = [
  'page',
  'rows',
  'in DOM',
  'drawn median ms',
  'p90',
  'min',
  'max',
  'settled median ms',
  'main-thread CPU ms',
  'cold load ms',
  `< ${TARGET_MS} ms`,
];
console.log(header.join(' | '));
for (const r of results) {
  console.log(
    [
      r.page,
      r.rows,
      r.rows_in_dom,
      r.median_ms,
      r.p90_ms,
      r.min_ms,
      r.max_ms,
      r.settled_median_ms,
      r.main_thread_cpu_median_ms,
      r.cold_load_ms,
      r.met ? 'yes' : 'no',
    ].join(' | '),
  );
}
const machine = {
  cpus: cpus().length,
  cpu: cpus()[0]?.model ?? '?',
  node: process.version,
  chromium,
  load_average: { before: round1(loadBefore), after: round1(loadavg()[0]!) },
};
console.log(
  `${machine.cpus}× ${machine.cpu}, load average ${machine.load_average.before} → ${machine.load_average.after}`,
);
const out = join(APP_ROOT, 'bench/results/render.json');
mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
const json = {
  bench: 'render',
  when: new Date().toISOString(),
  command: 'npm run bench:render',
  definition:
    "drawn: click on the sidebar link → end of the first frame showing the table with every row of its window and data-total = rows; settled: the same once the page's own refresh of the list has answered; main-thread CPU: Chrome's ThreadTime from the click to settled; medians over rounds; cold load: page load (timeOrigin) → settled",
  rounds: ROUNDS,
  library: COUNTS,
  machine,
  results,
};
writeFileSync(`${out}.tmp`, JSON.stringify(json, null, 2) + '\n');
renameSync(`${out}.tmp`, out);
console.log(`wrote ${out}`);
