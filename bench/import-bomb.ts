// bench/import-bomb: peak RSS of importing a highly compressible .tgz of 1,500 entries of ~1 MiB.
// Each case runs the real import (createStudio, import.run, a fresh data dir)
// in its own child process, so the peak RSS it reports is that import's alone.
// Run: npm run bench:import-bomb   (target: peak RSS under 300 MB, import refused or capped)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import { Header } from 'tar';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { APP_ROOT } from '../main/paths';

const ENTRIES = 1500;
const TARGET_MB = 300;

interface Case {
  id: string;
  entries: number;
  entryBytes: number; // under 1 MiB: every entry is a SKILL.md the importer would keep
}
const cases: Case[] = [
  { id: 'baseline: one small skill', entries: 1, entryBytes: 2_000 },
  { id: `bomb: ${ENTRIES} SKILL.md of 1,000,000 B`, entries: ENTRIES, entryBytes: 1_000_000 },
  {
    id: `bomb: ${ENTRIES} SKILL.md of 1 MiB + 1 B (each over the per-file cap)`,
    entries: ENTRIES,
    entryBytes: 1024 * 1024 + 1,
  },
];

interface Measured {
  outcome: 'imported' | 'refused';
  detail: string;
  seconds: number;
  peakRssMiB: number;
}

/** A SKILL.md padded with spaces: gzip shrinks 1 MB of it to about 1 KB. */
function skillBytes(i: number, size: number): Buffer {
  const head = `---\nname: bomb-${i}\ndescription: Entry ${i} of a compressed archive.\n---\n\n# Bomb ${i}\n\nUse this skill to test import limits.\n`;
  return Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length, 0x20)]);
}

/** Streams the archive to disk, so building it never holds more than one entry in memory. */
async function buildTgz(file: string, c: Case): Promise<void> {
  async function* blocks() {
    for (let i = 0; i < c.entries; i++) {
      const body = skillBytes(i, c.entryBytes);
      const header = new Header({
        path: `package/skills/bomb-${i}/SKILL.md`,
        mode: 0o644,
        uid: 0,
        gid: 0,
        size: body.length,
        mtime: new Date(0),
        type: 'File',
      });
      header.encode();
      yield header.block!;
      yield body;
      yield Buffer.alloc((512 - (body.length % 512)) % 512);
    }
    yield Buffer.alloc(1024); // end-of-archive marker
  }
  await pipeline(blocks(), createGzip({ level: 9 }), createWriteStream(file));
}

async function child(tgz: string): Promise<Measured> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pskills-bomb-data-'));
  const studio = createStudio({ dataDir, defaultBundleDir: null });
  const t0 = performance.now();
  let outcome: Measured['outcome'] = 'imported';
  let detail: string;
  try {
    const r = await directClient(studioContract, studio.dispatcher).import.run({ source: tgz }).result;
    detail = `${r.imported} imported, ${r.skipped.length} skipped${r.skipped[0] ? ` (${r.skipped[0].reason})` : ''}`;
  } catch (e) {
    outcome = 'refused';
    detail = (e as Error).message;
  }
  const seconds = (performance.now() - t0) / 1000;
  await studio.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  return { outcome, detail, seconds, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
}

const childArg = process.argv.find((a) => a.startsWith('--child='));
if (childArg) {
  console.log(JSON.stringify(await child(childArg.slice('--child='.length))));
} else {
  const work = mkdtempSync(join(tmpdir(), 'pskills-bomb-'));
  const self = fileURLToPath(import.meta.url);
  const rows: (Case & Measured & { tgzBytes: number })[] = [];
  try {
    for (const c of cases) {
      const tgz = join(work, `case-${rows.length}.tgz`);
      await buildTgz(tgz, c);
      const r = spawnSync(process.execPath, ['--import', 'tsx', self, `--child=${tgz}`], {
        encoding: 'utf8',
        cwd: APP_ROOT,
      });
      if (r.status !== 0) throw new Error(`child for "${c.id}" failed: ${r.stderr}`);
      rows.push({
        ...c,
        tgzBytes: statSync(tgz).size,
        ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Measured),
      });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    'case'.padEnd(66),
    '.tgz KiB'.padStart(9),
    'outcome'.padStart(9),
    'seconds'.padStart(8),
    'peak RSS MiB'.padStart(13),
  );
  for (const r of rows)
    console.log(
      r.id.padEnd(66),
      (r.tgzBytes / 1024).toFixed(0).padStart(9),
      r.outcome.padStart(9),
      r.seconds.toFixed(2).padStart(8),
      r.peakRssMiB.toFixed(0).padStart(13),
    );
  for (const r of rows) console.log(`  ${r.id}: ${r.detail}`);
  const worst = Math.max(...rows.filter((r) => r.entries === ENTRIES).map((r) => r.peakRssMiB));
  const met =
    worst * 1.048576 < TARGET_MB &&
    rows.every((r) => r.entries < ENTRIES || r.outcome === 'refused' || r.detail.includes('skipped'));
  console.log(
    `\nworst bomb peak RSS ${worst.toFixed(0)} MiB (${(worst * 1.048576).toFixed(0)} MB); target < ${TARGET_MB} MB: ${met ? 'met' : 'MISSED'}`,
  );
  const result = {
    bench: 'import-bomb',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, loadavg: loadavg() },
    targetPeakRssMB: TARGET_MB,
    worstPeakRssMiB: worst,
    met,
    rows,
  };
  mkdirSync(join(APP_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(APP_ROOT, 'bench', 'results', 'import-bomb.json'), JSON.stringify(result, null, 2) + '\n');
}
