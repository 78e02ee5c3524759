// bench/distill-side: the 512-token SkillWorld skill of bench:distill (test split, seed 0, its first 16
// practice questions, 40 steps, seed 0, 2 threads) distilled by the Python distiller and by the engine on
// one or more bundle folders, interleaved round by round in one process, so a machine shared with other
// jobs slows each side alike within a round (torch's step slows far more than onnxruntime's under load:
// compare rounds whose load stayed low). Node is warm: each bundle distils once before the rounds.
// Run: node --import tsx bench/distill-side.ts [--rounds 3] [--bundles DIR,DIR]  (default: the default bundle)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PracticeQuestion } from '../common/distill/practice';
import { loadBundle } from '../main/engine';
import { distillRows } from '../main/engine/distill';
import { teacherRows } from '../main/engine/distill-teacher';
import { APP_ROOT } from '../main/paths';

const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const ENV = { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') };
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 3);
const DIRS = (arg('--bundles') ?? join(APP_ROOT, 'resources/bundles/default')).split(',');
const THREADS = 2;
const STEPS = 40;

interface Row {
  skill: string;
  skill_path: string;
  length_bucket: number;
  messages: { role: string; content: string }[];
}
const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);

const tmp = mkdtempSync(join(tmpdir(), 'bench-distill-side-'));
try {
  const gen = spawnSync(
    PYTHON,
    ['-m', 'pskills_train.skillworld', 'generate', '--split', 'test', '--n', '100', '--seed', '0', '--out', tmp],
    { encoding: 'utf8', env: ENV },
  );
  if (gen.status !== 0) throw new Error(`skillworld generate failed: ${gen.stderr.slice(-2000)}`);
  const task = jsonl(join(tmp, 'tasks.jsonl'))
    .filter((t) => t.length_bucket === 512)
    .sort((a, b) => a.skill.localeCompare(b.skill))[0]!;
  const mine = jsonl(join(tmp, 'practice.jsonl'))
    .filter((p) => p.skill === task.skill)
    .slice(0, 16);
  const practice = join(tmp, 'practice-512.jsonl');
  writeFileSync(practice, mine.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const skillPath = join(tmp, task.skill_path);
  const skill = readFileSync(skillPath, 'utf8');
  const questions: PracticeQuestion[] = mine.map((p) => ({
    question: p.messages.find((m) => m.role === 'user')!.content,
    source: 'tests',
  }));

  const bundles = await Promise.all(
    DIRS.map((d) => loadBundle(d, { verifyHashes: false, intraOpNumThreads: THREADS })),
  );
  const node = async (i: number) => {
    const b = bundles[i]!;
    const t0 = performance.now();
    const rows = await teacherRows(b, skill, questions, { maxAnswerTokens: 48 });
    const teacher = (performance.now() - t0) / 1000;
    const res = await distillRows(b, rows, { steps: STEPS, seed: 0, intraOpNumThreads: THREADS });
    return { total: (performance.now() - t0) / 1000, teacher, train: res.seconds, loss: res.losses.at(-1)! };
  };
  const python = () => {
    const r = spawnSync(
      PYTHON,
      [
        ...['-m', 'pskills_train.distill', '--bundle', join(APP_ROOT, 'resources/bundles/default')],
        ...['--skill', skillPath, '--practice', practice, '--steps', String(STEPS), '--seed', '0'],
        ...['--threads', String(THREADS), '--json'],
      ],
      { encoding: 'utf8', env: ENV },
    );
    if (r.status !== 0) throw new Error(`python -m pskills_train.distill failed: ${r.stderr.slice(-2000)}`);
    const o = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    return {
      total: o.seconds as number,
      teacher: o.teacher_seconds as number,
      train: o.train_seconds as number,
      loss: o.losses.at(-1) as number,
    };
  };
  for (let i = 0; i < bundles.length; i++) await node(i); // cold: opens the train-step sessions
  console.log(
    `${task.skill} (${task.length_bucket}), ${questions.length} questions, ${STEPS} steps, ${THREADS} threads`,
  );
  console.log('s per skill (teacher / steps); ratio = Node ÷ Python of the same round');
  for (let r = 0; r < ROUNDS; r++) {
    const before = loadavg()[0]!;
    const got: [string, ReturnType<typeof python>][] = [['python', python()]];
    for (let i = 0; i < bundles.length; i++) got.push([`node:${DIRS[i]}`, await node(i)]);
    const py = got[0]![1].total;
    console.log(
      `round ${r + 1}, load ${before.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}: ` +
        got
          .map(
            ([k, v]) =>
              `${k} ${v.total.toFixed(2)} (${v.teacher.toFixed(2)} / ${v.train.toFixed(2)}) loss ${v.loss.toFixed(4)}` +
              (k === 'python' ? '' : ` ratio ${(v.total / py).toFixed(3)}`),
          )
          .join('; '),
    );
  }
  for (const b of bundles) await b.dispose();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
