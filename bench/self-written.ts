// bench/self-written: self-written practice written by the studio's engine (practice-writer.ts
// `writeRequests`) and by the eval's Python teacher (`Teacher.write`) on the same skills of a SkillWorld
// seed, and what the shared filter keeps of each (docs/distill.md "Practice"). Both sample alike (the same
// prompts, processors, generator and seeds); the two runtimes' logits differ in the last bits, so the
// counts are compared per skill and on average. `--before`: the Python side as it wrote before (greedy,
// a prompt per heading), beside. Prints a table; writes bench/results/self-written.json.
// Run: node --import tsx bench/self-written.ts [--seed 60661] [--skills 12] [--min-bucket 0] [--max-bucket 512]
//      [--only NAME,NAME] [--before] [--out FILE]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { filterWritten, writeHeadings, writePrompts, type Dropped } from '../common/distill/practice';
import { writeRequests } from '../main/api/services/practice-writer';
import { loadBundle } from '../main/engine';
import { generateAll } from '../main/engine/generate';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../main/paths';

const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const ENV = { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') };
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SEED = Number(arg('--seed') ?? 60661);
const N = Number(arg('--skills') ?? 12);
const MIN_BUCKET = Number(arg('--min-bucket') ?? 0);
const MAX_BUCKET = Number(arg('--max-bucket') ?? 512);
const ONLY = arg('--only')?.split(',') ?? null;
const BEFORE = process.argv.includes('--before');
const THREADS = 2;

interface Side {
  skill: string;
  replies: string[];
  kept: string[];
  dropped: Dropped;
}

function python(paths: string[], before: boolean): Side[] {
  const r = spawnSync(
    PYTHON,
    [
      join(APP_ROOT, 'bench/self_written.py'),
      DEFAULT_BUNDLE_DIR,
      String(THREADS),
      ...paths,
      ...(before ? ['--before'] : []),
    ],
    { encoding: 'utf8', env: ENV, maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`bench/self_written.py failed: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as Side[];
}

const tmp = mkdtempSync(join(tmpdir(), 'bench-self-written-'));
try {
  const gen = spawnSync(
    PYTHON,
    ['-m', 'pskills_train.skillworld', 'generate', '--split', 'test', '--n', '100', '--seed', String(SEED)].concat([
      '--out',
      tmp,
      '--filler',
      join(APP_ROOT, 'tests/fixtures/skillworld/filler'),
    ]),
    { encoding: 'utf8', env: ENV },
  );
  if (gen.status !== 0) throw new Error(`skillworld generate failed: ${gen.stderr.slice(-2000)}`);
  const tasks = readFileSync(join(tmp, 'tasks.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { skill: string; skill_path: string; length_bucket: number });
  const paths = new Map<string, string>();
  for (const t of tasks)
    if (ONLY ? ONLY.includes(t.skill) : t.length_bucket >= MIN_BUCKET && t.length_bucket <= MAX_BUCKET)
      paths.set(t.skill, join(tmp, t.skill_path));
  const skills = [...paths.keys()].sort().slice(0, N);
  if (!skills.every((s) => existsSync(paths.get(s)!))) throw new Error('a skill file is missing');

  const bundle = await loadBundle(DEFAULT_BUNDLE_DIR, { verifyHashes: false, intraOpNumThreads: THREADS });
  const ts: Side[] = [];
  for (const name of skills) {
    const text = readFileSync(paths.get(name)!, 'utf8');
    const res = await generateAll(bundle, writeRequests(bundle, text, writePrompts(writeHeadings(text))));
    const replies = res.map((r) => r.text);
    ts.push({ skill: name, replies, ...filterWritten(replies, text) });
  }
  await bundle.dispose();
  const py = python(
    skills.map((s) => paths.get(s)!),
    false,
  );
  const old = BEFORE
    ? python(
        skills.map((s) => paths.get(s)!),
        true,
      )
    : null;

  const rows = skills.map((skill, i) => ({
    skill,
    ts: ts[i]!.kept.length,
    python: py[i]!.kept.length,
    pythonBefore: old ? old[i]!.kept.length : null,
    sameReplies: ts[i]!.replies.filter((r, k) => r === py[i]!.replies[k]).length,
    replies: ts[i]!.replies.length,
    tsDropped: ts[i]!.dropped,
    pythonDropped: py[i]!.dropped,
    pythonBeforeDropped: old ? old[i]!.dropped : null,
  }));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const fmt = (d: Dropped | null) => (d ? `${d.empty}/${d.duplicate}/${d.copy}` : '-');
  console.log(
    `SkillWorld seed ${SEED}, test split, ${ONLY ? ONLY.join(', ') : `skills of ${MIN_BUCKET}–${MAX_BUCKET} tokens`}: ${skills.length}`,
  );
  console.log(
    `${'skill'.padEnd(22)}${'TS kept'.padStart(8)}${'Py kept'.padStart(8)}${'Py before'.padStart(10)}` +
      `${'same replies'.padStart(14)}${'TS e/d/c'.padStart(10)}${'Py e/d/c'.padStart(10)}${'before e/d/c'.padStart(14)}`,
  );
  for (const r of rows)
    console.log(
      `${r.skill.padEnd(22)}${String(r.ts).padStart(8)}${String(r.python).padStart(8)}` +
        `${String(r.pythonBefore ?? '-').padStart(10)}${`${r.sameReplies} of ${r.replies}`.padStart(14)}` +
        `${fmt(r.tsDropped).padStart(10)}${fmt(r.pythonDropped).padStart(10)}${fmt(r.pythonBeforeDropped).padStart(14)}`,
    );
  const summary = {
    seed: SEED,
    buckets: ONLY ?? [MIN_BUCKET, MAX_BUCKET],
    skills: skills.length,
    meanKept: { ts: mean(rows.map((r) => r.ts)), python: mean(rows.map((r) => r.python)) },
    meanKeptPythonBefore: old ? mean(rows.map((r) => r.pythonBefore!)) : null,
    meanAbsDiff: mean(rows.map((r) => Math.abs(r.ts - r.python))),
    equalCounts: rows.filter((r) => r.ts === r.python).length,
    sameReplies: `${rows.reduce((a, r) => a + r.sameReplies, 0)} of ${rows.reduce((a, r) => a + r.replies, 0)}`,
  };
  console.log(JSON.stringify(summary));
  writeFileSync(
    resolve(APP_ROOT, arg('--out') ?? 'bench/results/self-written.json'),
    JSON.stringify({ summary, rows }, null, 1) + '\n',
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
