// The teacher pass of a distillation (docs/distill.md "The teacher"): the base with the skill as its system
// message (a long one: the sections each question needs, common/distill/sections.ts; cut to fit, as the
// in_context condition) answers each practice question greedily, and its
// top-k log-probabilities along that answer are the student's target. Python: pskills_train.distill.teacher.
import { chatOf, type PracticeQuestion } from '../../common/distill/practice';
import { exampleNumbers, parrots } from '../../common/distill/practice-text';
import { SectionIndex } from '../../common/distill/sections';
import type { Bundle } from './bundle';
import type { ChatMessage } from './chat';
import { recipeOf } from './distill-recipe';
import { EngineError } from './errors';
import type { BundleManifest } from './manifest';
import { Row } from './row';
import { afterPrefix, fromPrefix, runPrefix, sharedLength, type Prefix } from './shared-prefix';
import { stepBuckets, trainStepEntry } from './train-step';

/** One practice row: the student's ids and, per answer position, the teacher's top-k. */
export interface TeacherRow {
  readonly ids: readonly number[];
  /** Index of the first position whose next token is an answer token. */
  readonly answerFrom: number;
  /** [answer tokens, k] each */
  readonly topIds: Int32Array;
  readonly topLogp: Float32Array;
  readonly answer: string;
  /** The index of its question in the questions the teacher pass was given. */
  readonly question: number;
  /** The teacher's whole answer as text, without stop and end-of-turn tokens (before a bucket's cut). */
  readonly said: string;
}

/** A cancelled distillation, teacher pass or steps, throws this (nothing is stored). */
export function checkAborted(signal: AbortSignal | undefined): void {
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

interface Answer {
  readonly tokens: readonly number[];
  readonly finishReason: string;
  /** The teacher's top-k at each generated token's position: [tokens, k]. */
  readonly topIds: readonly number[][];
  readonly topLogp: readonly number[][];
}

/** Greedy answers to prompts that start with `prefix` (its cache computed once for every group), keeping the
 * teacher's top-k at every step. The rest of each prompt follows the prefix (pads between, masked), then
 * one token per row per step. */
async function greedyShared(
  bundle: Bundle,
  prompts: readonly (readonly number[])[],
  maxNewTokens: number,
  signal: AbortSignal | undefined,
  prefix: Prefix,
): Promise<Answer[]> {
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const V = m.architecture.vocab;
  const { pad } = m.special_tokens;
  const rows = prompts.map((p, i) => new Row(bundle, { prompt: p, maxNewTokens }, i));
  const shared = prefix.length;
  const start = fromPrefix(m, prefix, prompts.length);
  let cache = start.cache;
  const masks = start.masks;
  let step = afterPrefix(
    prompts.map((p) => p.slice(shared)),
    shared,
    pad,
    masks,
  );
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
      cache = cache.rows(left);
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

/** The teacher's top-k along given answers, rows after `prefix` in one batch: each row's rest of prompt and
 * its answer follow the prefix (pads between, masked), right-aligned, so every row's answer logits lie in
 * the last (longest answer + 1) positions. */
async function forcedShared(
  bundle: Bundle,
  jobs: readonly { readonly prompt: readonly number[]; readonly answer: readonly number[] }[],
  prefix: Prefix,
): Promise<{ topIds: Int32Array; topLogp: Float32Array }[]> {
  const m = bundle.manifest;
  const k = trainStepEntry(m).top_k;
  const V = m.architecture.vocab;
  const { pad } = m.special_tokens;
  const { cache, masks } = fromPrefix(m, prefix, jobs.length);
  const { inputIds, positionIds } = afterPrefix(
    jobs.map((j) => [...j.prompt.slice(prefix.length), ...j.answer]),
    prefix.length,
    pad,
    masks,
  );
  const longest = Math.max(...jobs.map((j) => j.answer.length));
  const out = await bundle.lm.forward({
    batch: jobs.length,
    inputIds,
    positionIds,
    attentionMask: masks.flat(),
    cache,
    lora: bundle.lm.loraFeeds(jobs.map(() => null)),
    logitsToKeep: longest + 1,
  });
  const kept = out.logitsPerRow;
  return jobs.map((job, i) => {
    const n = job.answer.length;
    const topIds = new Int32Array(n * k);
    const topLogp = new Float32Array(n * k);
    // Position (kept − 1 − n + j) of row i predicts its answer token j (the last position is after it).
    for (let j = 0; j < n; j++) {
      const at = (i * kept + kept - 1 - n + j) * V;
      const t = topK(out.logits.subarray(at, at + V), k);
      topIds.set(t.ids, j * k);
      topLogp.set(t.logp, j * k);
    }
    return { topIds, topLogp };
  });
}

/** Groups of rows whose KV cache (and `perRow` more bytes each) stays within `budget` bytes together. */
function cacheGroups(m: BundleManifest, lengths: readonly number[], budget = 256 * 2 ** 20, perRow = 0): number[][] {
  const { layers, kv_heads, head_dim } = m.architecture;
  const perToken = layers * 2 * kv_heads * head_dim * 4;
  const groups: number[][] = [];
  let cur: number[] = [];
  let longest = 0;
  lengths.forEach((len, i) => {
    const next = Math.max(longest, len);
    if (cur.length > 0 && (cur.length + 1) * (next * perToken + perRow) > budget) {
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

/** A greedy answer that is another question's forced answer word for word parrots it (a small teacher
 * answers a request it cannot place with an example's reply), as does one that repeats an example's
 * number the chat does not hold (partial parroting, or with no forced reply to compare, as without the
 * Examples): no row (docs/distill.md "Practice"). */
function parroted(
  q: PracticeQuestion,
  said: string,
  forced: ReadonlyMap<string, string>,
  numbers: ReadonlySet<string>,
): boolean {
  const of = forced.get(said);
  if (of !== undefined && of !== q.question) return true;
  const asked = chatOf(q)
    .map((t) => t.content)
    .join('\n');
  return parrots(said, asked, numbers);
}

const MIN_READ = 64;

/** Each question's teacher prompt: the skill as the system message, then the question's chat. A skill longer
 * than the room beside a question is read as the sections that question needs (docs/distill.md "Long
 * skills"), then cut to fit as `in_context` cuts. */
export function teacherPrompts(
  bundle: Bundle,
  skill: string,
  questions: readonly PracticeQuestion[],
  maxAnswerTokens: number,
  signal: AbortSignal | undefined,
): number[][] {
  const count = (text: string) => bundle.tokenizer.encode(text).length;
  const whole = count(skill);
  let index: SectionIndex | undefined; // built once, on the first question the skill does not fit beside
  return questions.map((q) => {
    checkAborted(signal);
    const chat = chatOf(q);
    const bare = count(bundle.chat.render([{ role: 'system', content: '' }, ...chat]));
    // at least MIN_READ tokens of skill: a tiny window reads a piece that fitSystem then cuts (as Python)
    const room = Math.max(MIN_READ, bundle.manifest.architecture.max_positions - (maxAnswerTokens + 1) - bare);
    const text =
      whole <= room
        ? skill
        : (index ??= new SectionIndex(skill, count)).focused(chat.map((t) => t.content).join('\n'), room);
    const system = fitSystem(bundle, text, chat, maxAnswerTokens + 1);
    return bundle.tokenizer.encode(bundle.chat.render([{ role: 'system', content: system }, ...chat]));
  });
}

/** The teacher pass: a greedy answer per question with the skill in context, then the teacher's top-k on
 * it. The prompts' shared beginning (the skill) runs once; every group of rows starts from its cache. */
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
  const maxLen = stepBuckets(m).at(-1)!.length;
  const ends = new Set([...m.special_tokens.stop, m.special_tokens.eos]);
  const prompts = teacherPrompts(bundle, skill, questions, maxAnswerTokens, signal);
  if (prompts.length === 0) return [];
  const prefix = await runPrefix(bundle, prompts[0]!.slice(0, sharedLength(prompts)));
  // Questions without an answer are answered greedily, all together.
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
      prefix,
    );
    idx.forEach((i, j) => answers.set(i, got[j]!));
  }
  const forced = new Map(questions.flatMap((q) => (q.answer === undefined ? [] : [[q.answer.trim(), q.question]])));
  const numbers = exampleNumbers(skill);
  const rows: (TeacherRow & { readonly prompt: readonly number[] })[] = [];
  for (const [i, q] of questions.entries()) {
    checkAborted(signal);
    const prompt = prompts[i]!;
    const gen = answers.get(i);
    if (gen) {
      const said = bundle.tokenizer.decode(gen.tokens.filter((t) => !m.special_tokens.stop.includes(t))).trim();
      if (parroted(q, said, forced, numbers)) continue;
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
    // The greedy steps' own logits where there are (position j predicted answer token j); else empty,
    // filled below by the forced pass.
    const own = gen && gen.topIds.length >= n;
    const top = { topIds: new Int32Array(n * k), topLogp: new Float32Array(n * k) };
    if (own)
      for (let j = 0; j < n; j++) {
        top.topIds.set(gen.topIds[j]!, j * k);
        top.topLogp.set(gen.topLogp[j]!, j * k);
      }
    rows.push({
      ids: [...student, ...ans],
      answerFrom: student.length - 1,
      ...top,
      answer: bundle.tokenizer.decode(ans),
      question: i,
      said: bundle.tokenizer.decode(answer.filter((t) => !ends.has(t))).trim(),
      prompt: own ? [] : prompt,
    });
  }
  await fillForced(bundle, rows, prefix, maxAnswerTokens, signal);
  return rows.map(({ prompt: _, ...row }) => row);
}

/** Teacher-forced rows (those with a `prompt`), batched after the shared prefix: their top-k filled in place
 * ([rows, longest answer + 1, vocab] logits each batch). */
async function fillForced(
  bundle: Bundle,
  rows: readonly (TeacherRow & { readonly prompt: readonly number[] })[],
  prefix: Prefix,
  maxAnswerTokens: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const m = bundle.manifest;
  const jobs = rows.flatMap((r, i) => (r.prompt.length ? [i] : []));
  const answerOf = (i: number) => rows[i]!.ids.slice(rows[i]!.answerFrom + 1);
  const logitsPerRow = (maxAnswerTokens + 2) * m.architecture.vocab * 4;
  for (const group of cacheGroups(
    m,
    jobs.map((i) => rows[i]!.prompt.length + answerOf(i).length),
    256 * 2 ** 20,
    logitsPerRow,
  )) {
    checkAborted(signal);
    const idx = group.map((g) => jobs[g]!);
    const got = await forcedShared(
      bundle,
      idx.map((i) => ({ prompt: rows[i]!.prompt, answer: answerOf(i) })),
      prefix,
    );
    idx.forEach((i, j) => {
      rows[i]!.topIds.set(got[j]!.topIds);
      rows[i]!.topLogp.set(got[j]!.topLogp);
    });
  }
}
