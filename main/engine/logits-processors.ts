// Logits processors: each rewrites one row's next-token logits in place, in the order Hugging Face
// applies them (repetition penalty, temperature, top-k, top-p). Masked tokens become -Infinity.
import { invalid } from './errors';

export type LogitsProcessor = (logits: Float32Array, context: readonly number[]) => void;

export interface SamplingOptions {
  /** 0 or absent = greedy. */
  readonly temperature?: number;
  /** Keep the k most likely tokens; 0 or absent = all. */
  readonly topK?: number;
  /** Keep the smallest set whose probability reaches p; 1 or absent = all. */
  readonly topP?: number;
  /** > 1 discourages tokens already in the prompt or output (CTRL paper, as HF). 1 = off. */
  readonly repetitionPenalty?: number;
  /** Seed of the row's PRNG; the same seed gives the same tokens. */
  readonly seed?: number;
}

/** HF RepetitionPenaltyLogitsProcessor: positive logits divided by the penalty, negative multiplied. */
export const repetitionPenalty =
  (penalty: number): LogitsProcessor =>
  (logits, context) => {
    for (const id of new Set(context)) {
      const v = logits[id]!;
      logits[id] = v > 0 ? v / penalty : v * penalty;
    }
  };

export const temperature =
  (t: number): LogitsProcessor =>
  (logits) => {
    for (let i = 0; i < logits.length; i++) logits[i] = logits[i]! / t;
  };

/** Keeps the k largest (ties with the k-th are kept too, as HF's `< kth value` rule). */
export const topK =
  (k: number): LogitsProcessor =>
  (logits) => {
    if (k >= logits.length) return;
    const kth = Float32Array.from(logits).sort().reverse()[k - 1]!;
    for (let i = 0; i < logits.length; i++) if (logits[i]! < kth) logits[i] = -Infinity;
  };

/** Buckets of logit − max (STEP wide) that locate the tokens top-p masks whatever their order. */
const BUCKETS = 128;
const STEP = 0.25;

/** Nucleus: keeps the most likely tokens until their probability reaches p (at least one). Only the tokens
 * above a cut are sorted: a token whose probability and every smaller one's add up to at most 1 − p has
 * p of the mass ranked above it, so it is masked wherever it would sort (a full sort of a 49,152-token
 * vocabulary took ~50 ms a token). Equal logits rank by index, as a stable sort of the vocabulary. */
export const topP =
  (p: number): LogitsProcessor =>
  (logits) => {
    let max = -Infinity;
    for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
    if (max === -Infinity) return;
    const weights = new Float64Array(logits.length);
    const mass = new Float64Array(BUCKETS);
    const bucket = new Uint8Array(logits.length);
    let total = 0;
    for (let i = 0; i < logits.length; i++) {
      const d = logits[i]! - max; // top-k may have masked most: −∞, weight 0
      const w = (weights[i] = Math.exp(d));
      const k = Math.min(BUCKETS - 1, Math.floor(-d / STEP));
      bucket[i] = k;
      mass[k]! += w;
      total += w;
    }
    // The lowest bucket `cut` whose tokens and every lower one's weigh at most (1 − p): masked, unsorted.
    let cut = BUCKETS;
    let below = 0;
    while (cut > 1 && below + mass[cut - 1]! <= (1 - p) * total * (1 - 1e-9)) below += mass[--cut]!;
    const order: number[] = [];
    for (let i = 0; i < logits.length; i++) {
      if (bucket[i]! >= cut) logits[i] = -Infinity;
      else if (weights[i]! > 0) order.push(i);
    }
    order.sort((a, b) => logits[b]! - logits[a]! || a - b);
    let sum = 0;
    for (const i of order) {
      if (sum >= p * total) logits[i] = -Infinity;
      sum += weights[i]!;
    }
  };

/** Checks the options and returns the processors they ask for, in application order. */
export function processorsFor(o: SamplingOptions): LogitsProcessor[] {
  const bad = (field: string, value: unknown, want: string) =>
    invalid(`sampling.${field} is ${value}, expected ${want}`, { field: `sampling.${field}` });
  if (o.temperature !== undefined && !(o.temperature >= 0)) throw bad('temperature', o.temperature, '≥ 0');
  if (o.topK !== undefined && !(Number.isInteger(o.topK) && o.topK >= 0)) throw bad('topK', o.topK, 'an integer ≥ 0');
  if (o.topP !== undefined && !(o.topP > 0 && o.topP <= 1)) throw bad('topP', o.topP, 'in (0, 1]');
  if (o.repetitionPenalty !== undefined && !(o.repetitionPenalty > 0))
    throw bad('repetitionPenalty', o.repetitionPenalty, '> 0');
  const list: LogitsProcessor[] = [];
  if (o.repetitionPenalty !== undefined && o.repetitionPenalty !== 1) list.push(repetitionPenalty(o.repetitionPenalty));
  if (!o.temperature) return list; // greedy: temperature and truncation do not change the argmax
  if (o.temperature !== 1) list.push(temperature(o.temperature));
  if (o.topK) list.push(topK(o.topK));
  if (o.topP !== undefined && o.topP < 1) list.push(topP(o.topP));
  return list;
}
