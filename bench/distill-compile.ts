// bench/distill-compile: `pskills compile NAME --distill --steps 20` on a real base, the command a person
// runs, timed whole under `/usr/bin/time -f %M` (wall seconds, the process tree's peak RSS). The skill is
// SkillWorld's first 512-token test skill (seed 0, as bench:distill's 512 bucket), imported into a fresh
// data folder with its practice as its tests; the bundle is SmolLM2-135M-Instruct's layered bundle
// (~/.cache/pskills/smollm2-135m-layered, built here when absent, as bench:distill-scale builds it). Whether
// 4 rows a step distil as well as 8 is bench/distill-rows.ts. The machine is shared: the load average is
// recorded beside every figure.
// Writes bench/results/distill-compile.json and prints a table (docs/results.md "Distilling a real base").
// Run: nice -n 10 node --import tsx bench/distill-compile.ts [--runs N] [--steps K]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_ROOT } from '../main/paths';
import { BUNDLE, ENV, PSKILLS, round, realBundle, worldSkill } from './real-skill';

const OUT = join(APP_ROOT, 'bench/results/distill-compile.json');
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('--runs') ?? 1);
const STEPS = Number(arg('--steps') ?? 20);
const load = () => loadavg().map((x) => round(x, 2));

/** The command under /usr/bin/time: wall seconds, peak RSS of the process tree (MiB), its JSON line. */
function compile(data: string, name: string) {
  const file = join(data, 'time');
  const before = load();
  const t0 = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    [
      '-f',
      '%M',
      '-o',
      file,
      process.execPath,
      PSKILLS,
      'compile',
      name,
      '--distill',
      '--steps',
      String(STEPS),
      '--bundle',
      BUNDLE,
      '--json',
    ],
    { encoding: 'utf8', env: { ...ENV, PSKILLS_DATA_DIR: data }, maxBuffer: 64 * 2 ** 20 },
  );
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`compile failed (status ${r.status}): ${r.stderr.slice(-2000)}`);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, number | string>;
  const kib = Number(readFileSync(file, 'utf8').trim().split('\n').at(-1));
  return {
    wall_seconds: round(seconds),
    peak_rss_mib: Math.round(kib / 1024),
    distill_seconds: out.seconds,
    teacher_seconds: out.teacher_seconds,
    final_loss: round(Number(out.final_loss), 3),
    questions: out.questions,
    adapter: out.adapter as string,
    load_before: before,
    load_after: load(),
  };
}

function main(): void {
  realBundle();
  const scratch = mkdtempSync(join(tmpdir(), 'pskills-compile-'));
  try {
    const runs = [];
    let who: { name: string; tokens: number } | null = null;
    for (let i = 0; i < RUNS; i++) {
      const data = join(scratch, `data-${i}`);
      mkdirSync(data);
      who = worldSkill(data, join(scratch, `w-${i}`));
      console.error(`distill-compile: run ${i + 1}/${RUNS}: compile ${who.name} --distill --steps ${STEPS}`);
      const r = compile(data, who.name);
      runs.push(r);
    }
    const wall = runs.map((r) => r.wall_seconds).sort((a, b) => a - b);
    const result = {
      command: `pskills compile NAME --distill --steps ${STEPS} --bundle ${BUNDLE.replace(homedir(), '~')} --json`,
      bundle: 'SmolLM2-135M-Instruct (Q4_1 GGUF, float32 layered bundle)',
      skill: who,
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      runs,
      median_wall_seconds: wall[Math.floor(wall.length / 2)],
      max_peak_rss_mib: Math.max(...runs.map((r) => r.peak_rss_mib)),
      targets: {
        wall_le_90s: wall[Math.floor(wall.length / 2)]! <= 90,
        peak_le_3gb: runs.every((r) => r.peak_rss_mib * 2 ** 20 <= 3e9),
      },
    };
    mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
    writeFileSync(`${OUT}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
    renameSync(`${OUT}.tmp`, OUT);
    console.log(
      ['run', 'wall s', 'peak MiB', 'teacher s', 'distil s', 'final loss', 'load (1, 5, 15 min) before → after'].join(
        '\t',
      ),
    );
    runs.forEach((r, i) =>
      console.log(
        [
          i + 1,
          r.wall_seconds,
          r.peak_rss_mib,
          r.teacher_seconds,
          r.distill_seconds,
          r.final_loss,
          `${r.load_before.join(', ')} → ${r.load_after.join(', ')}`,
        ].join('\t'),
      ),
    );
    console.log(`(${OUT})`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
