// bench/models-scan: app.info's latency over the web host while models.list scans a big LM Studio folder
// (60,000 files and 600 empty .gguf in one folder) and 1,500 Ollama manifests that are sparse 1 MiB
// files (docs/security.md "GGUF files"; target: app.info ≤ 100 ms throughout). Before the scan was made
// asynchronous and capped, app.info waited 2,198 ms on such folders. app.info is polled every 50 ms, as the
// probe that found it did. The first scan of a studio also starts the header worker; it is reported apart.
// Run: node --import tsx bench/models-scan.ts [--reps N] [--files N]
//   (prints a table, writes bench/results/models-scan.json)
import { closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createStudio } from '../main/api/root';
import { startWebHost } from '../main/api/transports/web-host';
import { APP_ROOT } from '../main/paths';
import { webClient } from '../tests/int/api/web-client';
import { latency, pollAppInfo } from './latency';

const { values } = parseArgs({
  options: { reps: { type: 'string', default: '3' }, files: { type: 'string', default: '60000' } },
});
const reps = Number(values.reps);
const files = Number(values.files);

const work = mkdtempSync(join(tmpdir(), 'pskills-bench-scan-'));
try {
  const home = join(work, 'home');
  const many = join(home, '.lmstudio', 'models', 'pub', 'many');
  mkdirSync(many, { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(join(many, `f${i}.bin`), '');
  for (let i = 0; i < 600; i++) writeFileSync(join(many, `m${i}.gguf`), '');
  const manifests = join(home, '.ollama', 'models', 'manifests', 'registry.ollama.ai', 'library');
  mkdirSync(join(home, '.ollama', 'models', 'blobs'), { recursive: true });
  for (let i = 0; i < 1_500; i++) {
    mkdirSync(join(manifests, `m${i}`), { recursive: true });
    const fd = openSync(join(manifests, `m${i}`, 'latest'), 'w');
    ftruncateSync(fd, 1 << 20);
    closeSync(fd);
  }

  const dataDir = mkdtempSync(join(work, 'data-'));
  const studio = createStudio({ dataDir, defaultBundleDir: null, modelsHome: home });
  const host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: null });
  const c = await webClient(host.origin, host.token);
  const scans: { first: boolean; list_ms: number; found: number; skipped: number; lags: number[] }[] = [];
  try {
    for (let rep = 0; rep <= reps; rep++) {
      const lags: number[] = [];
      let pending = true;
      const t0 = performance.now();
      const listing = c.api.models.list({}).finally(() => (pending = false));
      await pollAppInfo(c, lags, () => !pending, 50);
      const list = await listing;
      scans.push({
        first: rep === 0,
        list_ms: performance.now() - t0,
        found: list.found.length,
        skipped: list.skipped.length,
        lags,
      });
    }
  } finally {
    c.close();
    await host.close();
    await studio.dispose();
  }
  console.log('| scan | models.list ms | found | skipped | app.info calls | p50 ms | max ms |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [i, s] of scans.entries()) {
    const st = latency(s.lags);
    console.log(
      `| ${i}${s.first ? ' (starts the worker)' : ''} | ${s.list_ms.toFixed(0)} | ${s.found} | ${s.skipped} | ${st.calls} | ${st.p50_ms.toFixed(1)} | ${st.max_ms.toFixed(1)} |`,
    );
  }
  const later = latency(scans.filter((s) => !s.first).flatMap((s) => s.lags));
  const first = latency(scans[0]!.lags);
  console.log(
    `\napp.info during the first scan: max ${first.max_ms.toFixed(1)} ms; later scans: max ${later.max_ms.toFixed(1)} ms`,
  );
  const result = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg() },
    layout: { lmstudioFiles: files, emptyGguf: 600, ollamaManifests1MiB: 1_500 },
    targets: { appInfoMs: 100 },
    appInfoDuringFirstScan: first,
    appInfoDuringLaterScans: later,
    scans: scans.map(({ lags, ...s }) => ({ ...s, ...latency(lags) })),
  };
  mkdirSync(join(APP_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(APP_ROOT, 'bench', 'results', 'models-scan.json'), JSON.stringify(result, null, 2) + '\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}
