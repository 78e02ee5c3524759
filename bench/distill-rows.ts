// bench/distill-rows: rows a step for a real base. A layered bundle distils 4 rows a step, the default
// bundle 8 (docs/distill.md "Layered train step"). On SmolLM2-135M and SkillWorld's first 512-token skill
// (bench/real-skill.ts), the same teacher rows are distilled for K steps (default 20, seed 0, zero init)
// with 4 and with 8 rows a step, and each adapter is scored by its mean distillation loss (the KL to the
// teacher's top-k) over every practice row, beside the base's (no adapter): seconds, loss per step and the
// loss over all rows. Writes bench/results/distill-rows.json and prints a table.
// Run: nice -n 10 node --import tsx bench/distill-rows.ts [--steps K]
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { studioContract } from '../common/api/contract';
import { createStudio } from '../main/api/root';
import { directClient } from '../main/api/transports/direct';
import { loadBundle, type Bundle } from '../main/engine';
import type { EngineAdapter } from '../main/engine/adapter';
import { distillRows } from '../main/engine/distill';
import { fillBatch } from '../main/engine/distill-batch';
import { teacherRows, type TeacherRow } from '../main/engine/distill-teacher';
import type { BundleManifest } from '../main/engine/manifest';
import { bucketFor, initState, TrainLoop, TrainStepCache, trainStepEntry } from '../main/engine/train-step';
import { APP_ROOT } from '../main/paths';
import { BUNDLE, realBundle, round, worldSkill } from './real-skill';

const OUT = join(APP_ROOT, 'bench/results/distill-rows.json');
const i = process.argv.indexOf('--steps');
const STEPS = i > 0 ? Number(process.argv[i + 1]) : 20;
const THREADS = 2;

/** The bundle seen with only its buckets of `rows` rows (so a step takes that many). */
function withRows(bundle: Bundle, rows: number): Bundle {
  const m = bundle.manifest;
  const ts = trainStepEntry(m);
  const manifest: BundleManifest = { ...m, train_step: { ...ts, buckets: ts.buckets.filter((b) => b.batch === rows) } };
  return Object.create(bundle, { manifest: { value: manifest } }) as Bundle;
}

/** Mean loss over every row (batches in order, weighted by their answer tokens), the factors unchanged (lr 0). */
async function lossOver(bundle: Bundle, rows: readonly TeacherRow[], adapter: EngineAdapter | null): Promise<number> {
  const m = bundle.manifest;
  const steps = new TrainStepCache(bundle.dir, m);
  const loop = new TrainLoop(m, initState(m, adapter, 0));
  const per = Math.min(...trainStepEntry(m).buckets.map((b) => b.batch));
  let sum = 0;
  let weight = 0;
  try {
    for (let at = 0; at < rows.length; at += per) {
      const part = rows.slice(at, at + per);
      const bucket = bucketFor(m, Math.max(...part.map((r) => r.ids.length)))!;
      const { graph, release } = await steps.acquire(bucket, { intraOpNumThreads: THREADS });
      try {
        fillBatch(m, part, loop.buffers(bucket));
        const n = part.reduce((x, r) => x + r.topIds.length / trainStepEntry(m).top_k, 0);
        sum += (await loop.run(graph, 1, 0)) * n;
        weight += n;
      } finally {
        release();
      }
    }
  } finally {
    await steps.dispose();
  }
  return sum / weight;
}

async function main(): Promise<void> {
  realBundle();
  const scratch = mkdtempSync(join(tmpdir(), 'pskills-rows-'));
  try {
    const data = join(scratch, 'data');
    mkdirSync(data);
    const who = worldSkill(data, join(scratch, 'world'));
    // The practice questions the studio would use (no self-written ones: the same rows for both runs).
    const studio = createStudio({ dataDir: data });
    const api = directClient(studioContract, studio.dispatcher);
    let questions;
    let text: string;
    try {
      await api.engine.loadBundle({ dir: resolve(BUNDLE) });
      questions = (await api.adapters.distillPlan({ name: who.name })).questions;
      text = (await api.skills.get({ name: who.name })).content;
    } finally {
      await studio.dispose();
    }
    const bundle = await loadBundle(BUNDLE, { verifyHashes: false, intraOpNumThreads: THREADS });
    try {
      const rows = await teacherRows(bundle, text, questions);
      const base = await lossOver(withRows(bundle, 4), rows, null);
      const runs: Record<string, unknown> = {};
      for (const per of [4, 8]) {
        const b = withRows(bundle, per);
        const load = loadavg().map((x) => round(x, 2));
        const res = await distillRows(b, rows, { steps: STEPS, seed: 0, intraOpNumThreads: THREADS });
        runs[`${per}_rows`] = {
          seconds: round(res.seconds),
          seconds_per_step: round(res.seconds / STEPS, 2),
          losses: res.losses.map((x) => round(x, 3)),
          loss_all_rows: round(await lossOver(withRows(bundle, 4), rows, res.adapter), 4),
          load_before: load,
        };
      }
      const result = {
        bundle: 'SmolLM2-135M-Instruct (layered)',
        skill: who,
        rows: rows.length,
        steps: STEPS,
        threads: THREADS,
        cpus: cpus().length,
        cpu: cpus()[0]?.model ?? 'unknown',
        loss_all_rows_base: round(base, 4),
        runs,
      };
      writeFileSync(`${OUT}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
      renameSync(`${OUT}.tmp`, OUT);
      console.log(
        ['rows a step', 's a step', 'first → last step loss', 'loss over all rows (base ' + round(base, 3) + ')'].join(
          '\t',
        ),
      );
      for (const [k, r] of Object.entries(runs) as [
        string,
        { seconds_per_step: number; losses: number[]; loss_all_rows: number },
      ][])
        console.log([k, r.seconds_per_step, `${r.losses[0]} → ${r.losses.at(-1)}`, r.loss_all_rows].join('\t'));
      console.log(`(${OUT})`);
    } finally {
      await bundle.dispose();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
