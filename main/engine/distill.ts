// Distilling a skill in the engine (docs/bundle-format.md "train_step"): the teacher is the base with the
// skill as its system message (cut to fit, as the in_context condition), answering each practice
// question greedily; its top-k log-probabilities on that answer are the target. The student is the base
// plus the adapter, without the skill. K steps of the train-step graph move the adapter toward the teacher.
import { chatOf, type PracticeQuestion } from '../../common/distill/practice';
import type { EngineAdapter } from './adapter';
import type { Bundle, BundleInfo } from './bundle';
import type { ChatMessage } from './chat';
import { batchOrder } from './distill-order';
import { recipeOf } from './distill-recipe';
import { EngineError, invalid } from './errors';
import { KV_KINDS, pastName, presentName } from './graph-io';
import { KvCache } from './kv-cache';
import type { BundleManifest } from './manifest';
import { float32, type Tensor } from './ort';
import { Row } from './row';
import {
  bucketFor,
  initState,
  stateAdapter,
  TrainLoop,
  TrainStepCache,
  type StepRunner,
  trainStepEntry,
  type BatchBuffers,
  type Bucket,
  type TrainBatch,
} from './train-step';

/** One practice row: the student's ids and, per answer position, the teacher's top-k. */
export interface TeacherRow {
  readonly ids: readonly number[];
  /** Index of the first position whose next token is an answer token. */
  readonly answerFrom: number;
  /** [answer tokens, k] each */
  readonly topIds: Int32Array;
  readonly topLogp: Float32Array;
  readonly answer: string;
}

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
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new EngineError('cancelled', 'distillation cancelled; nothing was stored');
}

/** The skill text cut (at a token boundary) so the teacher's prompt and answer fit the context. */
export function fitSystem(bundle: Bundle, skill: string, chat: readonly ChatMessage[], room: number): string {
  const render = (system: string) => bundle.chat.render([{ role: 'system', content: system }, ...chat]);
  const limit = bundle.manifest.architecture.max_positions - room;
  const count = (system: string) => bundle.tokenizer.encode(render(system)).length;
  if (count(skill) <= limit) return skill;
  const ids = bundle.tokenizer.encode(skill);
  let keep = Math.max(0, limit - count(''));
  while (keep > 0) {
    const cut = bundle.tokenizer.decode(ids.slice(0, keep)).replace(/\uFFFD/g, '');
    const over = count(cut) - limit;
    if (over <= 0) return cut;
    keep -= over;
  }
  return '';
}

/** log-softmax top-k of one logits row (descending; equal logits by id), in one pass over the row. */
export function topK(logits: Float32Array, k: number): { ids: number[]; logp: number[] } {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  const lse = max + Math.log(sum);
  const ids: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i]!;
    if (ids.length === k && !(x > vals[k - 1]!)) continue;
    let at = ids.length === k ? k - 1 : ids.length;
    while (at > 0 && x > vals[at - 1]!) at--;
    ids.splice(at, 0, i);
    vals.splice(at, 0, x);
    if (ids.length > k) {
      ids.pop();
      vals.pop();
    }
  }
  return { ids, logp: vals.map((x) => x - lse) };
}

/** A cache of the rows `from` (an index may repeat: a batch-1 cache copied to every row). */
function pickRows(m: BundleManifest, cache: KvCache, from: readonly number[]): KvCache {
  const outputs: Record<string, Tensor> = {};
  for (let i = 0; i < m.architecture.layers; i++)
    for (const kind of KV_KINDS) {
      const t = cache.feeds()[pastName(i, kind)]!;
      const all = t.data as Float32Array;
      const size = all.length / t.dims[0]!;
      const data = new Float32Array(size * from.length);
      from.forEach((r, j) => data.set(all.subarray(r * size, (r + 1) * size), j * size));
      outputs[presentName(i, kind)] = float32(data, [from.length, ...t.dims.slice(1)]);
    }
  return KvCache.fromOutputs(m, outputs);
}

interface Answer {
  readonly tokens: readonly number[];
  readonly finishReason: string;
  /** The teacher's top-k at each generated token's position: [tokens, k]. */
  readonly topIds: readonly number[][];
  readonly topLogp: readonly number[][];
}

/** Greedy answers to prompts that share a prefix (the skill), keeping the teacher's top-k at every
 * step. The prefix runs once and its cache is copied to every row, as the Python teacher's shared-prefix
 * batches; the rest of each prompt follows it (pads between, masked), then one token per row per step. */
// eslint-disable-next-line max-lines-per-function -- one prefill-then-decode loop that reads top to bottom; the teacher/batch/loop split of this file moves it whole
async function greedyShared(
  bundle: Bundle,
  prompts: readonly (readonly number[])[],
  maxNewTokens: number,
  signal: AbortSignal | undefined,
): Promise<Answer[]> {
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const V = m.architecture.vocab;
  const { pad } = m.special_tokens;
  const b = prompts.length;
  const rows = prompts.map((p, i) => new Row(bundle, { prompt: p, maxNewTokens }, i));
  let shared = Math.min(...prompts.map((p) => p.length)) - 1; // every row keeps a token for its first step
  for (const p of prompts) {
    let j = 0;
    while (j < shared && p[j] === prompts[0]![j]) j++;
    shared = j;
  }
  const masks: number[][] = prompts.map(() => new Array<number>(shared).fill(1));
  let cache = KvCache.empty(m, b);
  if (shared > 0) {
    const prefix = prompts[0]!.slice(0, shared);
    const out = await bundle.lm.forward({
      batch: 1,
      inputIds: prefix,
      positionIds: prefix.map((_, i) => i),
      attentionMask: masks[0]!,
      cache: KvCache.empty(m, 1),
      lora: bundle.lm.loraFeeds([null]),
      logitsToKeep: 1,
    });
    cache = b === 1 ? out.cache : pickRows(m, out.cache, new Array<number>(b).fill(0));
  }
  const width = Math.max(...prompts.map((p) => p.length - shared));
  let step = { inputIds: [] as number[], positionIds: [] as number[] };
  prompts.forEach((p, i) => {
    const padding = width - (p.length - shared);
    for (let t = 0; t < padding; t++) {
      step.inputIds.push(pad);
      step.positionIds.push(0);
      masks[i]!.push(0);
    }
    for (let t = shared; t < p.length; t++) {
      step.inputIds.push(p[t]!);
      step.positionIds.push(t);
      masks[i]!.push(1);
    }
  });
  const tops = prompts.map(() => ({ ids: [] as number[][], logp: [] as number[][] }));
  // The rows still answering; a row that ends leaves the batch (and its cache), so the steps after it
  // cost what the rest need.
  let active = rows.map((_, i) => i);
  let lora = bundle.lm.loraFeeds(active.map(() => null));
  for (;;) {
    checkAborted(signal);
    const out = await bundle.lm.forward({
      batch: active.length,
      ...step,
      attentionMask: active.flatMap((i) => masks[i]!),
      cache,
      lora,
      logitsToKeep: 1,
    });
    cache = out.cache;
    const seq = out.logitsPerRow;
    active.forEach((i, j) => {
      const last = out.logits.slice(((j + 1) * seq - 1) * V, (j + 1) * seq * V);
      const t = topK(last, k);
      tops[i]!.ids.push(t.ids);
      tops[i]!.logp.push(t.logp);
      rows[i]!.next(last);
    });
    const left = active.flatMap((i, j) => (rows[i]!.done ? [] : [j]));
    if (left.length === 0) break;
    if (left.length < active.length) {
      cache = pickRows(m, cache, left);
      active = left.map((j) => active[j]!);
      lora = bundle.lm.loraFeeds(active.map(() => null));
    }
    for (const i of active) masks[i]!.push(1);
    step = {
      inputIds: active.map((i) => rows[i]!.tokens.at(-1)!),
      positionIds: active.map((i) => rows[i]!.nextPosition),
    };
  }
  return rows.map((r, i) => {
    const res = r.result();
    return { tokens: res.tokens, finishReason: res.finishReason, topIds: tops[i]!.ids, topLogp: tops[i]!.logp };
  });
}

/** The logits that predict each token of `answer` after `prompt` (one forward of both, the base or with
 *  `adapter`): row j, `logits.subarray(j * vocab, (j + 1) * vocab)`, predicts answer[j]. */
export async function answerLogits(
  bundle: Bundle,
  prompt: readonly number[],
  answer: readonly number[],
  adapter: EngineAdapter | null = null,
): Promise<{ logits: Float32Array; vocab: number }> {
  const m = bundle.manifest;
  const n = answer.length;
  // Positions prompt−1 … prompt+n−2 predict the n answer tokens; the last kept row (after the answer) is dropped.
  const ids = [...prompt, ...answer];
  const out = await bundle.lm.forward({
    batch: 1,
    inputIds: ids,
    positionIds: ids.map((_, i) => i),
    attentionMask: ids.map(() => 1),
    cache: KvCache.empty(m, 1),
    lora: bundle.lm.loraFeeds([adapter]),
    logitsToKeep: n + 1,
  });
  const V = m.architecture.vocab;
  const first = out.logitsPerRow - (n + 1);
  return { logits: out.logits.subarray(first * V, (first + n) * V), vocab: V };
}

/** The teacher's top-k along a given answer. */
async function forcedTop(
  bundle: Bundle,
  prompt: readonly number[],
  ans: readonly number[],
): Promise<{ topIds: Int32Array; topLogp: Float32Array }> {
  const k = trainStepEntry(bundle.manifest).top_k;
  const n = ans.length;
  const { logits, vocab: V } = await answerLogits(bundle, prompt, ans);
  const topIds = new Int32Array(n * k);
  const topLogp = new Float32Array(n * k);
  for (let j = 0; j < n; j++) {
    const t = topK(logits.subarray(j * V, (j + 1) * V), k);
    topIds.set(t.ids, j * k);
    topLogp.set(t.logp, j * k);
  }
  return { topIds, topLogp };
}

/** Groups of rows whose KV cache stays within `budget` bytes together. */
function cacheGroups(m: BundleManifest, lengths: readonly number[], budget = 256 * 2 ** 20): number[][] {
  const { layers, kv_heads, head_dim } = m.architecture;
  const perToken = layers * 2 * kv_heads * head_dim * 4;
  const groups: number[][] = [];
  let cur: number[] = [];
  let longest = 0;
  lengths.forEach((len, i) => {
    const next = Math.max(longest, len);
    if (cur.length > 0 && (cur.length + 1) * next * perToken > budget) {
      groups.push(cur);
      cur = [];
      longest = 0;
    }
    cur.push(i);
    longest = Math.max(longest, len);
  });
  if (cur.length) groups.push(cur);
  return groups;
}

/** The teacher pass: a greedy answer per question with the skill in context, then the teacher's top-k on it. */
export async function teacherRows(
  bundle: Bundle,
  skill: string,
  questions: readonly PracticeQuestion[],
  {
    maxAnswerTokens = recipeOf(bundle.manifest).max_answer,
    signal,
  }: { maxAnswerTokens?: number; signal?: AbortSignal } = {},
): Promise<TeacherRow[]> {
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const maxLen = Math.max(...trainStepEntry(m).buckets.map((b) => b.length));
  const prompts = questions.map((q) => {
    checkAborted(signal);
    const system = fitSystem(bundle, skill, chatOf(q), maxAnswerTokens + 1);
    return bundle.tokenizer.encode(bundle.chat.render([{ role: 'system', content: system }, ...chatOf(q)]));
  });
  // Questions without an answer are answered greedily, all together (the skill prefix once).
  const open = questions.flatMap((q, i) => (q.answer === undefined ? [i] : []));
  const answers = new Map<number, Answer>();
  for (const group of cacheGroups(
    m,
    open.map((i) => prompts[i]!.length + maxAnswerTokens),
  )) {
    const idx = group.map((g) => open[g]!);
    const got = await greedyShared(
      bundle,
      idx.map((i) => prompts[i]!),
      maxAnswerTokens,
      signal,
    );
    idx.forEach((i, j) => answers.set(i, got[j]!));
  }
  // A greedy answer that is another question's forced answer word for word parrots it (a small
  // teacher answers a request it cannot place with an example's reply): no row (docs/distill.md "Practice").
  const forced = new Map(questions.flatMap((q) => (q.answer === undefined ? [] : [[q.answer.trim(), q.question]])));
  const rows: TeacherRow[] = [];
  for (const [i, q] of questions.entries()) {
    checkAborted(signal);
    const prompt = prompts[i]!;
    const gen = answers.get(i);
    if (gen) {
      const said = bundle.tokenizer.decode(gen.tokens.filter((t) => !m.special_tokens.stop.includes(t))).trim();
      const of = forced.get(said);
      if (of !== undefined && of !== q.question) continue;
    }
    let answer: number[];
    if (!gen) {
      // A given answer (e.g. one the verifier passed) is teacher-forced: the target is the teacher's
      // distribution along it, ending the turn after it (docs/distill.md "The Python distiller"); cut
      // at the answer room as the Python teacher cuts it (a long section's cloze body).
      answer = [...bundle.tokenizer.encode(q.answer!).slice(0, maxAnswerTokens), m.special_tokens.eos];
    } else {
      answer = [...gen.tokens];
      // The teacher ended its turn: the student learns to end it there too, with one end-of-turn token
      // in place of the stop token the teacher produced (as the Python teacher: docs/distill.md).
      if (gen.finishReason === 'eos') answer.pop();
      if (gen.finishReason === 'eos' || gen.finishReason === 'stop') answer.push(m.special_tokens.eos);
    }
    const student = bundle.tokenizer.encode(bundle.chat.render(chatOf(q)));
    const n = Math.min(answer.length, maxLen - student.length);
    if (n < 1) continue; // the question alone fills the largest bucket
    const ans = answer.slice(0, n);
    let top: { topIds: Int32Array; topLogp: Float32Array };
    if (gen && gen.topIds.length >= n) {
      // The greedy steps' own logits: position j predicted answer token j.
      top = { topIds: new Int32Array(n * k), topLogp: new Float32Array(n * k) };
      for (let j = 0; j < n; j++) {
        top.topIds.set(gen.topIds[j]!, j * k);
        top.topLogp.set(gen.topLogp[j]!, j * k);
      }
    } else top = await forcedTop(bundle, prompt, ans);
    rows.push({
      ids: [...student, ...ans],
      answerFrom: student.length - 1,
      ...top,
      answer: bundle.tokenizer.decode(ans),
    });
  }
  return rows;
}

/** Rows → one bucket's batch: left-padded (mask 0, positions from each row's first real token), rows
 * beyond the list all padding. */
export function packBatch(
  manifest: BundleManifest,
  rows: readonly TeacherRow[],
  batch: number,
  length: number,
): TrainBatch {
  const k = trainStepEntry(manifest).top_k;
  const pad = manifest.special_tokens.pad;
  const inputIds = new Array<number>(batch * length).fill(pad);
  const attentionMask = new Array<number>(batch * length).fill(0);
  const positionIds = new Array<number>(batch * length).fill(0);
  const answerMask = new Float32Array(batch * length);
  const teacherIds = new Array<number>(batch * length * k).fill(0);
  const teacherLogp = new Float32Array(batch * length * k).fill(Math.log(1 / k));
  rows.slice(0, batch).forEach((row, b) => {
    const off = length - row.ids.length; // left padding
    row.ids.forEach((id, t) => {
      inputIds[b * length + off + t] = id;
      attentionMask[b * length + off + t] = 1;
      positionIds[b * length + off + t] = t;
    });
    const n = row.topIds.length / k;
    for (let j = 0; j < n; j++) {
      const pos = b * length + off + row.answerFrom + j;
      answerMask[pos] = 1;
      for (let c = 0; c < k; c++) {
        teacherIds[pos * k + c] = row.topIds[j * k + c]!;
        teacherLogp[pos * k + c] = row.topLogp[j * k + c]!;
      }
    }
  });
  return { inputIds, attentionMask, positionIds, answerMask, teacherIds, teacherLogp };
}

/** Rows → one bucket's buffers, as `packBatch` lays them out, written in place (every element). */
export function fillBatch(manifest: BundleManifest, rows: readonly TeacherRow[], buf: BatchBuffers): void {
  const k = trainStepEntry(manifest).top_k;
  const { batch, length } = buf;
  buf.inputIds.fill(BigInt(manifest.special_tokens.pad));
  buf.attentionMask.fill(0n);
  buf.positionIds.fill(0n);
  buf.answerMask.fill(0);
  buf.teacherIds.fill(0n);
  buf.teacherLogp.fill(Math.log(1 / k));
  for (let b = 0; b < Math.min(batch, rows.length); b++) {
    const row = rows[b]!;
    const off = b * length + length - row.ids.length; // left padding
    for (let t = 0; t < row.ids.length; t++) {
      buf.inputIds[off + t] = BigInt(row.ids[t]!);
      buf.attentionMask[off + t] = 1n;
      buf.positionIds[off + t] = BigInt(t);
    }
    const n = row.topIds.length / k;
    const at = off + row.answerFrom;
    buf.answerMask.fill(1, at, at + n);
    for (let c = 0; c < n * k; c++) buf.teacherIds[at * k + c] = BigInt(row.topIds[c]!);
    buf.teacherLogp.set(row.topLogp, at * k);
  }
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
): Promise<Omit<DistillResult, 'teacherSeconds'>> {
  const m = bundle.manifest;
  const steps = options.steps ?? recipeOf(m).steps;
  const lr = options.lr ?? recipeOf(m).lr;
  if (rows.length === 0)
    throw invalid(
      `no practice rows to distil from: every question with its answer is longer than the largest train-step bucket (${Math.max(...trainStepEntry(m).buckets.map((b) => b.length))} tokens)`,
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

/** The bucket a distillation of these questions would most likely run in: the longest student prompt
 * plus a full teacher answer (an upper bound: answers that end early pick a smaller bucket). */
export function estimateBucket(
  bundle: Pick<BundleInfo, 'manifest' | 'tokenizer' | 'chat'>,
  questions: readonly PracticeQuestion[],
  maxAnswerTokens = recipeOf(bundle.manifest).max_answer,
): Bucket {
  const m = bundle.manifest;
  const longest = Math.max(1, ...questions.map((q) => bundle.tokenizer.encode(bundle.chat.render(chatOf(q))).length));
  const all = [...trainStepEntry(m).buckets].sort((a, b) => a.length - b.length);
  return bucketFor(m, longest + maxAnswerTokens) ?? all.at(-1)!;
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
