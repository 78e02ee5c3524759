// bench/distill-layered: the layered train step against the whole-model one on the 5 M default bundle (which
// ships "whole"): a copy of the bundle gets the layered graphs (python -m pskills_train.export.train_layers),
// then the same teacher rows, seed and 40 steps run through both (the loss curves, their largest relative
// gap), and one step per shared bucket is timed in each (median of 5 after a warm-up, 2 threads).
// Writes bench/results/distill-layered.json (docs/distill.md "Layered train step").
// Run: nice -n 10 node --import tsx bench/distill-layered.ts
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { textPractice } from '../common/distill/practice';
import { loadBundle, type Bundle } from '../main/engine';
import { distillRows, timeTrainStep } from '../main/engine/distill';
import { teacherRows } from '../main/engine/distill-teacher';
import { stepKind, trainStepEntry } from '../main/engine/train-step';
import { APP_ROOT } from '../main/paths';

const DEFAULT = join(APP_ROOT, 'resources/bundles/default');
const PYTHON = join(APP_ROOT, 'training/.venv/bin/python');
const OUT = join(APP_ROOT, 'bench/results/distill-layered.json');
const SKILL = join(APP_ROOT, 'tests/fixtures/skillworld/filler/code-review/skills/review-change/SKILL.md');
const THREADS = 2;
const STEPS = 40;
const BUCKETS = ['8x32', '8x64', '8x128'];

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;

const tmp = mkdtempSync(join(tmpdir(), 'pskills-layered-'));
const layeredDir = join(tmp, 'default-layered');
try {
  cpSync(DEFAULT, layeredDir, { recursive: true });
  const t0 = performance.now();
  const exp = spawnSync(
    PYTHON,
    ['-m', 'pskills_train.export.train_layers', layeredDir, '--buckets', BUCKETS.join(',')],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, PYTHONPATH: join(APP_ROOT, 'training/src') } },
  );
  if (exp.status !== 0) throw new Error('train_layers export failed');
  const exportSeconds = (performance.now() - t0) / 1000;
  const whole = await loadBundle(DEFAULT, { verifyHashes: false, intraOpNumThreads: THREADS });
  const layered = await loadBundle(layeredDir, { verifyHashes: false, intraOpNumThreads: THREADS });
  if (stepKind(whole.manifest) !== 'whole' || stepKind(layered.manifest) !== 'layered')
    throw new Error('expected the default bundle whole and its copy layered');
  const skill = readFileSync(SKILL, 'utf8');
  const questions = textPractice({ name: 'skill', description: '', text: skill }).slice(0, 16);
  // Rows from the whole bundle's teacher, capped to the buckets both have.
  const rows = (await teacherRows(whole, skill, questions)).filter((r) => r.ids.length <= 128);
  const curve = async (b: Bundle) =>
    (await distillRows(b, rows, { steps: STEPS, seed: 0, intraOpNumThreads: THREADS })).losses;
  const lossWhole = await curve(whole);
  const lossLayered = await curve(layered);
  const gap = Math.max(...lossWhole.map((w, i) => Math.abs(lossLayered[i]! - w) / Math.max(1e-6, Math.abs(w))));
  const steps: Record<string, { whole: number; layered: number }> = {};
  for (const name of BUCKETS) {
    const [batch, length] = name.split('x').map(Number);
    const find = (b: Bundle) =>
      trainStepEntry(b.manifest).buckets.find((x) => x.batch === batch && x.length === length);
    const bw = find(whole);
    const bl = find(layered);
    if (!bw || !bl) continue;
    steps[name] = {
      whole: round(await timeTrainStep(whole, bw, 5)),
      layered: round(await timeTrainStep(layered, bl, 5)),
    };
  }
  await whole.dispose();
  await layered.dispose();
  const result = {
    bundle: 'resources/bundles/default',
    threads: THREADS,
    rows: rows.length,
    steps: STEPS,
    export_seconds: round(exportSeconds, 1),
    loss_whole: lossWhole.map((x) => round(x, 5)),
    loss_layered: lossLayered.map((x) => round(x, 5)),
    loss_max_rel_gap: gap,
    seconds_per_step: steps,
  };
  mkdirSync(join(APP_ROOT, 'bench/results'), { recursive: true });
  writeFileSync(`${OUT}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(`${OUT}.tmp`, OUT);
  console.log(
    `loss: whole ${lossWhole[0]!.toFixed(4)} → ${lossWhole.at(-1)!.toFixed(4)}, layered ${lossLayered[0]!.toFixed(4)} → ${lossLayered.at(-1)!.toFixed(4)}; largest relative gap over ${STEPS} steps ${gap.toExponential(2)}`,
  );
  console.log('bucket\twhole s/step\tlayered s/step');
  for (const [k, v] of Object.entries(steps)) console.log(`${k}\t${v.whole}\t${v.layered}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
