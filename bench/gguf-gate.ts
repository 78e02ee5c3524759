// bench/gguf-gate: the GGUF gate's targets (docs/security.md "GGUF files") on every crafted header of
// tests/fixtures/gguf-gate-cases.json: each refused (or passed) in ≤ 2 s with ≤ 300 MB peak RSS, each
// measured in its own process (`/usr/bin/time` for the RSS); and app.info's latency over the web host
// while models.list scans fake LM Studio and Ollama folders holding a FIFO, a link to /dev/zero, a
// 400 MB key claim and an 800 MB sparse file of 10^8 strings (target: ≤ 100 ms throughout), the first
// scan (which starts the header worker) apart from the later ones, and the same calls with no scan.
// Run: node --import tsx bench/gguf-gate.ts [--reps N]   (prints a table, writes bench/results/gguf-gate.json)
import { spawnSync } from 'node:child_process';
import { lutimesSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createStudio } from '../main/api/root';
import { startWebHost } from '../main/api/transports/web-host';
import { inspectGguf } from '../main/models/gguf';
import { APP_ROOT } from '../main/paths';
import { buildCase, CASES } from '../tests/unit/models/gguf-cases';
import { webClient } from '../tests/int/api/web-client';
import { latency, pollAppInfo, type Latency } from './latency';

const { values } = parseArgs({ options: { one: { type: 'string' }, reps: { type: 'string', default: '3' } } });

if (values.one) {
  // Child: one header through the gate, its time on stdout.
  const t0 = performance.now();
  let outcome = 'passed';
  try {
    inspectGguf(values.one);
  } catch (e) {
    outcome = (e as Error).message.slice(values.one.length + 2, values.one.length + 120);
  }
  process.stdout.write(JSON.stringify({ ms: performance.now() - t0, outcome }) + '\n');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'pskills-bench-gguf-'));
try {
  const rows: { case: string; expected: string | null; outcome: string; ms: number; rssMiB: number }[] = [];
  for (const [i, c] of CASES.cases.entries()) {
    const path = buildCase(c, work, `case-${i}.gguf`);
    const r = spawnSync(
      '/usr/bin/time',
      ['-f', 'maxrss_kb=%M', process.execPath, '--import', 'tsx', 'bench/gguf-gate.ts', '--one', path],
      { encoding: 'utf8', cwd: APP_ROOT, timeout: 60_000 },
    );
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ms: number; outcome: string };
    const rssMiB = Number(/maxrss_kb=(\d+)/.exec(r.stderr)?.[1]) / 1024;
    rows.push({ case: c.name, expected: c.refusal, outcome: out.outcome, ms: out.ms, rssMiB });
  }
  console.log('| case | expected | ms | peak RSS MiB (the whole node process) |\n|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.case} | ${r.expected ?? 'passes'} | ${r.ms.toFixed(1)} | ${r.rssMiB.toFixed(0)} |`);

  // app.info while models.list scans hostile folders, over the web host, fresh studio per rep.
  const home = join(work, 'home');
  const lms = join(home, '.lmstudio', 'models', 'pub', 'model');
  mkdirSync(lms, { recursive: true });
  const pick = (part: string) => CASES.cases.find((c) => c.name.includes(part))!;
  buildCase(pick('a FIFO'), lms, 'fifo.gguf');
  buildCase(pick('a symbolic link to /dev/zero'), lms, 'zero.gguf');
  buildCase(pick('whose one key claims 400 MB'), lms, 'key.gguf');
  buildCase(pick('10^8 empty strings'), lms, 'strings.gguf');
  buildCase(pick('10^6 empty strings'), lms, 'ok-strings.gguf');
  buildCase(pick('a valid llama header'), lms, 'ok.gguf');
  // The first scan of a studio starts its header worker (under tsx from source: ~1 s, and the start
  // itself holds the main thread for tens of ms); later scans reuse it. Files are touched between
  // scans so the header cache misses and every file is read again.
  const cold: number[] = [];
  const lags: number[] = [];
  const idle: number[] = [];
  const lists: number[] = [];
  const files = readdirSync(lms).map((f) => join(lms, f));
  const dataDir = mkdtempSync(join(work, 'data-'));
  const studio = createStudio({ dataDir, defaultBundleDir: null, modelsHome: home });
  const host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: null });
  const c = await webClient(host.origin, host.token);
  try {
    for (let rep = 0; rep <= Number(values.reps); rep++) {
      const when = new Date(Date.now() + rep * 1000);
      for (const f of files) lutimesSync(f, when, when);
      const t0 = performance.now();
      let pending = true;
      const listing = c.api.models.list({}).finally(() => (pending = false));
      await pollAppInfo(c, rep === 0 ? cold : lags, () => !pending, 5);
      const list = await listing;
      const took = performance.now() - t0;
      if (rep > 0) lists.push(took);
      if (list.skipped.length !== 4) throw new Error(`expected 4 skipped, got ${JSON.stringify(list.skipped)}`);
      // The same calls for as long with no scan: the machine's own noise, for comparison.
      const end = performance.now() + took;
      await pollAppInfo(c, idle, () => performance.now() >= end, 5);
    }
  } finally {
    c.close();
    await host.close();
    await studio.dispose();
  }
  const scan = { ...latency(lags), list_ms: lists };
  const first = latency(cold);
  const quiet = latency(idle);
  const line = (s: Latency) =>
    `${s.calls} calls, p50 ${s.p50_ms.toFixed(1)} ms, p99 ${s.p99_ms.toFixed(1)} ms, max ${s.max_ms.toFixed(1)} ms`;
  console.log(`\napp.info during the first models.list (worker start): ${line(first)}`);
  console.log(`app.info during models.list (${values.reps} scans, web host): ${line(scan)}`);
  console.log(`app.info with no scan, as long:            ${line(quiet)}`);
  console.log(`models.list: ${lists.map((m) => m.toFixed(0)).join(', ')} ms (every file read again)`);
  const result = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg() },
    targets: { ms: 2000, rssMiB: 300, appInfoMs: 100 },
    cases: rows,
    appInfoDuringFirstScan: first,
    appInfoDuringScan: scan,
    appInfoNoScan: quiet,
  };
  mkdirSync(join(APP_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(APP_ROOT, 'bench', 'results', 'gguf-gate.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
