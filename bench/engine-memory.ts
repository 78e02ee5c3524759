// bench/engine-memory: the studio process's resident memory (main thread and engine worker: the worker
// is a worker_thread, so process RSS covers it) at three points: the studio built with no bundle, the
// default bundle loaded, and one chat generated on it. Each run is a fresh child process (memory from
// one run must not count in the next); the table shows the median of the runs, in MiB, measured after
// a full GC of the main thread.
// Run: node --import tsx bench/engine-memory.ts [--bundle DIR] [--runs N] [--label NAME]
// (--label names the row kept in bench/results/engine-memory.json, e.g. before / after).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    bundle: { type: 'string' },
    runs: { type: 'string', default: '3' },
    label: { type: 'string', default: 'current' },
    child: { type: 'boolean' },
  },
});
const DIR = values.bundle ? resolve(values.bundle) : DEFAULT_BUNDLE_DIR;
const POINTS = ['studio', 'bundle_loaded', 'after_chat'] as const;
type Point = (typeof POINTS)[number];
interface Sample {
  rss_mib: number;
  heap_mib: number;
  array_buffers_mib: number;
}
const MiB = 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function sample(): Promise<Sample> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  return { rss_mib: m.rss / MiB, heap_mib: m.heapUsed / MiB, array_buffers_mib: m.arrayBuffers / MiB };
}

async function child(): Promise<void> {
  const { createStudio } = await import('../main/api/root');
  const work = mkdtempSync(join(tmpdir(), 'pskills-memory-'));
  const out: Partial<Record<Point, Sample>> & { peak_rss_mib?: number; tokens?: number } = {};
  try {
    const studio = createStudio({ dataDir: join(work, 'data'), defaultBundleDir: DIR });
    out.studio = await sample();
    await studio.engine.load();
    out.bundle_loaded = await sample();
    const r = await studio.engine.generate(
      {
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'Which lock does adding a column to a table take?' },
        ],
        maxTokens: 64,
        sampling: { temperature: 0 },
      },
      { emit: () => undefined, signal: new AbortController().signal },
    );
    out.tokens = r.completionTokens;
    out.after_chat = await sample();
    out.peak_rss_mib = process.resourceUsage().maxRSS / 1024;
    await studio.dispose();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0); // the engine worker is unref'd, but do not wait for it
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function main(): void {
  const runs: (Record<Point, Sample> & { peak_rss_mib: number; tokens: number })[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', '--bundle', DIR],
      { cwd: APP_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    runs.push(JSON.parse(stdout));
  }
  const row = Object.fromEntries(
    POINTS.map((p) => [
      p,
      {
        rss_mib: median(runs.map((r) => r[p].rss_mib)),
        heap_mib: median(runs.map((r) => r[p].heap_mib)),
        array_buffers_mib: median(runs.map((r) => r[p].array_buffers_mib)),
      },
    ]),
  ) as Record<Point, Sample>;
  const peak = median(runs.map((r) => r.peak_rss_mib));

  console.log(`engine memory (${values.label}), ${DIR}, median of ${runs.length} runs, MiB`);
  console.log('point           rss      heap   array buffers');
  for (const p of POINTS) {
    const s = row[p];
    console.log(
      `${p.padEnd(14)} ${s.rss_mib.toFixed(1).padStart(6)} ${s.heap_mib.toFixed(1).padStart(8)} ${s.array_buffers_mib.toFixed(1).padStart(14)}`,
    );
  }
  console.log(`${'peak rss'.padEnd(14)} ${peak.toFixed(1).padStart(6)}`);

  const dir = join(APP_ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'engine-memory.json');
  const old = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { rows?: Record<string, unknown> }) : {};
  const result = {
    bench: 'engine-memory',
    date: new Date().toISOString(),
    machine: `${cpus().length}× ${cpus()[0]?.model.trim() ?? 'cpu'}, node ${process.version}`,
    bundle: DIR,
    settings: { runs: runs.length, chat_tokens: runs[0]?.tokens ?? 0, statistic: 'median' },
    rows: { ...(old.rows ?? {}), [values.label!]: { ...row, peak_rss_mib: peak, date: new Date().toISOString() } },
  };
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

if (values.child) await child();
else main();
