// bench/import: imports every package pinned in shared/data/skill-packages.txt into a fresh data
// dir, with the npm cache already warm, and reports skills/s and the database size.
// Run: npm run bench:import   (target: the whole list in under 60 s on this machine)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { APP_ROOT } from '../main/paths';

const listFile = resolve(APP_ROOT, process.env.PSKILLS_SKILL_LIST ?? '../shared/data/skill-packages.txt');
const specs = readFileSync(listFile, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const cacheDir = resolve(process.env.PSKILLS_NPM_CACHE ?? join(APP_ROOT, '.cache', 'npm-packs'));
mkdirSync(cacheDir, { recursive: true });

async function importAll(dataDir: string) {
  const studio = createStudio({ dataDir, cacheDir });
  const api = directClient(studioContract, studio.dispatcher);
  const rows: { spec: string; imported: number; skipped: number; ms: number; error?: string }[] = [];
  const t0 = performance.now();
  for (const spec of specs) {
    const t = performance.now();
    try {
      const r = await api.import.run({ source: spec }).result;
      rows.push({ spec, imported: r.imported, skipped: r.skipped.length, ms: performance.now() - t });
    } catch (err) {
      rows.push({ spec, imported: 0, skipped: 0, ms: performance.now() - t, error: (err as Error).message });
    }
  }
  const totalMs = performance.now() - t0;
  await studio.dispose();
  return { rows, totalMs };
}

// Pass 1 warms the package cache (downloads); pass 2 is the measured import.
const warmDir = mkdtempSync(join(tmpdir(), 'pskills-bench-warm-'));
const warm = await importAll(warmDir);
rmSync(warmDir, { recursive: true, force: true });

const dataDir = mkdtempSync(join(tmpdir(), 'pskills-bench-import-'));
const { rows, totalMs } = await importAll(dataDir);
const dbBytes = ['studio.db', 'studio.db-wal'].reduce(
  (n, f) => n + (statSync(join(dataDir, f), { throwIfNoEntry: false })?.size ?? 0),
  0,
);
rmSync(dataDir, { recursive: true, force: true });

const imported = rows.reduce((n, r) => n + r.imported, 0);
const skipped = rows.reduce((n, r) => n + r.skipped, 0);
console.log('package'.padEnd(48), 'imported'.padStart(8), 'skipped'.padStart(8), 'ms'.padStart(8));
for (const r of rows)
  console.log(
    r.spec.padEnd(48),
    String(r.imported).padStart(8),
    String(r.skipped).padStart(8),
    r.ms.toFixed(0).padStart(8),
    r.error ? `  ERROR ${r.error}` : '',
  );
const result = {
  bench: 'import',
  date: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  packages: specs.length,
  failed: rows.filter((r) => r.error).map((r) => ({ spec: r.spec, error: r.error })),
  imported,
  skipped,
  seconds: totalMs / 1000,
  skillsPerSecond: imported / (totalMs / 1000),
  dbBytes,
  warmPassSeconds: warm.totalMs / 1000,
  targetSeconds: 60,
  rows,
};
console.log(
  `\n${imported} skills imported, ${skipped} skipped, in ${result.seconds.toFixed(1)} s = ${result.skillsPerSecond.toFixed(1)} skills/s; database ${(dbBytes / 1048576).toFixed(1)} MiB (cache warm; first pass incl. downloads ${result.warmPassSeconds.toFixed(1)} s)`,
);
mkdirSync(join(APP_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(APP_ROOT, 'bench', 'results', 'import.json'), JSON.stringify(result, null, 2) + '\n');
