// What bench:distill-compile and bench/distill-rows share: SmolLM2-135M-Instruct's layered bundle (built as
// bench:distill-scale builds it when absent) and SkillWorld's first 512-token test skill (seed 0), imported
// into a data folder with its practice as its tests.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { APP_ROOT } from '../main/paths';

const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
export const PSKILLS = join(APP_ROOT, 'bin/pskills.mjs');
const CACHE = process.env.PSKILLS_CACHE ?? join(homedir(), '.cache', 'pskills');
export const BUNDLE = join(CACHE, 'smollm2-135m-layered');
export const ENV = { ...process.env, PSKILLS_CACHE: CACHE, PYTHONPATH: join(APP_ROOT, 'training/src') };
/** The bundle's buckets in these benches: the default 4-row ones (docs/distill.md "Layered train step") and
 * 8 × 128, the rows bench:distill-scale compares with torch + PEFT. */
export const BENCH_BUCKETS = '4x64,4x128,4x256,8x128';
export const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export function run(what: string, args: string[], env: NodeJS.ProcessEnv = ENV): string {
  const r = spawnSync(process.execPath, [PSKILLS, ...args], { encoding: 'utf8', env, maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`${what} failed (status ${r.status}): ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

/** SmolLM2-135M's layered bundle, built as bench:distill-scale builds it when it is not there. */
export function realBundle(): string {
  if (existsSync(join(BUNDLE, 'bundle.json'))) return BUNDLE;
  const f = spawnSync(PYTHON, [join(APP_ROOT, 'training/scripts/fetch_smollm2.py'), '--cache', CACHE], {
    encoding: 'utf8',
    env: ENV,
  });
  if (f.status !== 0) throw new Error(`fetch_smollm2.py failed: ${f.stderr.slice(-2000)}`);
  const gguf = f.stdout.trim().split('\n').at(-1)!;
  console.error(`distill-compile: building ${BUNDLE}`);
  run('bundle create', [
    'bundle',
    'create',
    '--from-gguf',
    gguf,
    '--out',
    BUNDLE,
    '--train-step-buckets',
    BENCH_BUCKETS,
    '--force',
  ]);
  return BUNDLE;
}

/** The first 512-token skill of SkillWorld's test world (seed 0), imported with its practice as tests. */
export function worldSkill(data: string, scratch: string): { name: string; tokens: number } {
  const world = join(scratch, 'world');
  const g = spawnSync(
    PYTHON,
    ['-m', 'pskills_train.skillworld', 'generate', '--split', 'test', '--n', '100', '--seed', '0', '--out', world],
    { encoding: 'utf8', env: ENV },
  );
  if (g.status !== 0) throw new Error(`skillworld generate failed: ${g.stderr.slice(-2000)}`);
  const rows = readFileSync(join(world, 'tasks.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { skill: string; skill_path: string; length_bucket: number; skill_tokens: number });
  const row = rows.filter((t) => t.length_bucket === 512).sort((a, b) => a.skill.localeCompare(b.skill))[0];
  if (!row) throw new Error('the generated world has no 512-token skill');
  const env = { ...ENV, PSKILLS_DATA_DIR: data };
  run('import', ['import', join(world, row.skill_path, '..')], env);
  run('tests set', ['tests', 'set', row.skill, '--skillworld', world], env);
  return { name: row.skill, tokens: row.skill_tokens };
}
