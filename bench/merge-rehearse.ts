// bench/merge-rehearse: what a merge with rehearsal costs in the studio (docs/distill.md "Merging with
// rehearsal"), through the API the merge workbench and `pskills merge --rehearse` use, on the default
// bundle: three SkillWorld skills (a generated test world, the Python venv's generator) distilled from
// zero, then their cat merge plain and rehearsed for K steps. Wall seconds per call, one process, the
// engine worker's threads as the studio sets them. Prints a table, writes bench/results/merge-rehearse.json.
// Run: nice -n 10 node --import tsx bench/merge-rehearse.ts [--steps 100] [--skills 3] [--seed 0]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '100' },
    skills: { type: 'string', default: '3' },
    seed: { type: 'string', default: '0' },
    out: { type: 'string', default: join(APP_ROOT, 'bench/results/merge-rehearse.json') },
  },
});
const steps = Number(values.steps);
const n = Number(values.skills);

const tmp = mkdtempSync(join(tmpdir(), 'bench-merge-rehearse-'));
const world = join(tmp, 'world');
const gen = spawnSync(
  join(APP_ROOT, 'training/.venv/bin/python'),
  [
    '-m',
    'pskills_train.skillworld',
    'generate',
    '--split',
    'test',
    '--n',
    String(n),
    '--seed',
    values.seed,
    '--out',
    world,
  ],
  { cwd: join(APP_ROOT, 'training'), encoding: 'utf8' },
);
if (gen.status !== 0) throw new Error(`skillworld generate failed: ${gen.stderr}`);
const names = readdirSync(join(world, 'skills')).sort().slice(0, n);

const studio = createStudio({ dataDir: join(tmp, 'data'), defaultBundleDir: DEFAULT_BUNDLE_DIR });
const api = directClient(studioContract, studio.dispatcher);
const rows: { what: string; seconds: number; rank: number }[] = [];
const timed = async <T>(what: string, f: () => Promise<T>, rank: (r: T) => number): Promise<T> => {
  const t0 = performance.now();
  const r = await f();
  rows.push({ what, seconds: (performance.now() - t0) / 1000, rank: rank(r) });
  return r;
};
try {
  const ids: string[] = [];
  for (const name of names) {
    await api.skills.save({ name, content: readFileSync(join(world, 'skills', name, 'SKILL.md'), 'utf8') });
    const d = await timed(
      `distil ${name} (40 steps, zero init)`,
      () => api.adapters.distill({ skill: { name }, steps: 40, from: 'zero' }).result,
      (r) => r.rank,
    );
    ids.push(d.adapter.id);
  }
  await timed(
    'merge cat',
    () => api.adapters.merge({ ids, method: 'cat' }).result,
    (r) => r.adapter.rank,
  );
  await timed(
    `merge cat, rehearse ${steps}`,
    () => api.adapters.merge({ ids, method: 'cat', rehearse: steps }).result,
    (r) => r.adapter.rank,
  );
} finally {
  await studio.dispose();
  rmSync(tmp, { recursive: true, force: true });
}

console.log(`${'call'.padEnd(48)}${'seconds'.padStart(10)}${'rank'.padStart(6)}`);
for (const r of rows)
  console.log(`${r.what.padEnd(48)}${r.seconds.toFixed(2).padStart(10)}${String(r.rank).padStart(6)}`);
const out = {
  bundle: 'resources/bundles/default',
  skills: names,
  steps,
  rows,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', loadavg: loadavg() },
  date: new Date().toISOString(),
};
const part = `${values.out}.tmp-${process.pid}`;
writeFileSync(part, `${JSON.stringify(out, null, 2)}\n`);
renameSync(part, values.out);
console.log(`wrote ${values.out}`);
