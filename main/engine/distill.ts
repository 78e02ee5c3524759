// Distilling a skill in the engine (docs/bundle-format.md "train_step"): the teacher pass (distill-teacher.ts)
// gives each practice row the teacher's top-k; the student is the base plus the adapter, without the
// skill, and K steps of the train-step graph move the adapter toward the teacher. Python:
// pskills_train.distill.student.
import type { PracticeQuestion } from '../../common/distill/practice';
import type { EngineAdapter } from './adapter';
import type { Bundle } from './bundle';
import { fillBatch } from './distill-batch';
import { batchOrder } from './distill-order';
import { recipeOf } from './distill-recipe';
import { checkAborted, type TeacherRow } from './distill-teacher';
import { EngineError, invalid } from './errors';
import {
  bucketFor,
  stepBuckets,
  initState,
  stateAdapter,
  TrainLoop,
  TrainStepCache,
  type StepRunner,
  trainStepEntry,
  type Bucket,
} from './train-step';

export interface DistillProgress {
  readonly phase: 'teacher' | 'train';
  readonly step: number;
  readonly steps: number;
  readonly loss: number | null;
  readonly secondsLeft: number | null;
}

export interface DistillOptions {
  readonly steps?: number;
  readonly lr?: number;
  readonly seed?: number;
  /** Start from this adapter (e.g. the instant one); null = zero init. */
  readonly init?: EngineAdapter | null;
  readonly maxAnswerTokens?: number;
  /** Follow-ups to the teacher's calls of a tool the skill names, answered too (the `round_trip` source,
   *  docs/distill.md "Practice"); default off. */
  readonly roundTrip?: boolean;
  /** Threads of the train-step graphs (default: every core). */
  readonly intraOpNumThreads?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: DistillProgress) => void;
}

export interface DistillResult {
  readonly adapter: EngineAdapter;
  readonly losses: number[];
  readonly steps: number;
  readonly seconds: number;
  readonly teacherSeconds: number;
  readonly rows: number;
  /** Questions the run added after the teacher pass (round_trip follow-ups); absent: none. */
  readonly added?: readonly PracticeQuestion[];
}
/** The bundle's kept train-step sessions, closed with the bundle. */
const caches = new WeakMap<Bundle, TrainStepCache>();
function trainSteps(bundle: Bundle): TrainStepCache {
  let c = caches.get(bundle);
  if (!c) {
    const cache = (c = new TrainStepCache(bundle.dir, bundle.manifest));
    caches.set(bundle, cache);
    bundle.onDispose(() => cache.dispose());
  }
  return c;
}

/** K steps of the train-step graph over the teacher rows (batches drawn in a seeded order, one bucket for
 * the longest row). Cancel is checked before every step; a non-finite loss stops at that step. Nothing
 * here stores anything: the caller stores the result. */
export async function distillRows(
  bundle: Bundle,
  rows: readonly TeacherRow[],
  options: DistillOptions = {},
): Promise<Omit<DistillResult, 'teacherSeconds' | 'added'>> {
  const m = bundle.manifest;
  const steps = options.steps ?? recipeOf(m).steps;
  const lr = options.lr ?? recipeOf(m).lr;
  if (rows.length === 0)
    throw invalid(
      `no practice rows to distil from: every question with its answer is longer than the largest train-step bucket (${stepBuckets(m).at(-1)!.length} tokens)`,
    );
  const longest = Math.max(...rows.map((r) => r.ids.length));
  if (!bucketFor(m, longest))
    throw invalid(`practice rows of ${longest} tokens are longer than every train-step bucket`);
  // Each step runs in the smallest bucket its own batch fits (as the Python distiller pads each batch to
  // its longest row): one long question no longer makes every step pay for the longest shape.
  const releases = new Map<number, () => void>();
  const graphs = new Map<number, StepRunner>();
  const graphFor = async (bucket: Bucket): Promise<StepRunner> => {
    let g = graphs.get(bucket.length);
    if (!g) {
      const got = await trainSteps(bundle).acquire(bucket, {
        provider: bundle.provider.used,
        intraOpNumThreads: options.intraOpNumThreads,
      });
      g = got.graph;
      graphs.set(bucket.length, g);
      releases.set(bucket.length, got.release);
    }
    return g;
  };
  const started = performance.now();
  const losses: number[] = [];
  const loop = new TrainLoop(m, initState(m, options.init ?? null, options.seed ?? 0));
  // The same batches as the Python distiller for the same seed (docs/distill.md "Batch order and init").
  const batch = bucketFor(m, longest)!.batch;
  const order = batchOrder(rows.length, batch, steps, options.seed ?? 0);
  try {
    for (let step = 1; step <= steps; step++) {
      checkAborted(options.signal);
      const picked = order[step - 1]!.map((i) => rows[i]!);
      let tokens = 0;
      for (const r of picked) tokens = Math.max(tokens, r.ids.length);
      const bucket = bucketFor(m, tokens)!;
      const graph = await graphFor(bucket);
      fillBatch(m, picked, loop.buffers(bucket));
      const loss = await loop.run(graph, step, lr);
      if (!Number.isFinite(loss))
        throw new EngineError(
          'invalid_input',
          `distillation stopped at step ${step}: the loss is ${loss}; nothing was stored (try a lower learning rate)`,
        );
      losses.push(loss);
      const perStep = (performance.now() - started) / 1000 / step;
      options.onProgress?.({ phase: 'train', step, steps, loss, secondsLeft: perStep * (steps - step) });
    }
  } finally {
    for (const release of releases.values()) release();
  }
  const state = loop.current;
  return {
    adapter: stateAdapter(m, state),
    losses,
    steps,
    seconds: (performance.now() - started) / 1000,
    rows: rows.length,
  };
}
/** Seconds per train step of one bucket on this machine: the median of `runs` timed steps on a full batch
 * whose rows each end in an answer of `maxAnswerTokens` (the graph's LM head runs on the answer rows
 * only, so this is an upper bound, as `estimateBucket`'s bucket is). The first run is not counted, so a
 * session the bundle already kept open times the same. */
export async function timeTrainStep(
  bundle: Bundle,
  bucket: Bucket,
  runs = 3,
  maxAnswerTokens = recipeOf(bundle.manifest).max_answer,
): Promise<number> {
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const n = Math.min(maxAnswerTokens, bucket.length - 1);
  const row: TeacherRow = {
    ids: Array.from({ length: bucket.length }, (_, i) => i + 1),
    answerFrom: bucket.length - 1 - n,
    topIds: new Int32Array(n * k),
    topLogp: new Float32Array(n * k).fill(Math.log(1 / k)),
    answer: '',
    question: 0,
    said: '',
  };
  // The bundle's kept session: a distillation that follows the estimate finds it open (and warm).
  const { graph, release } = await trainSteps(bundle).acquire(bucket, { provider: bundle.provider.used });
  try {
    const loop = new TrainLoop(m, initState(m, null, 0));
    fillBatch(m, new Array<TeacherRow>(bucket.batch).fill(row), loop.buffers(bucket));
    const times: number[] = [];
    // The first run also builds the session's kernels: not counted.
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      await loop.run(graph, i + 1, recipeOf(m).lr);
      if (i > 0) times.push((performance.now() - t0) / 1000);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)]!;
  } finally {
    release();
  }
}
