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

/** Nucleus: keeps the most likely tokens until their probability reaches p (at least one). */
export const topP =
  (p: number): LogitsProcessor =>
  (logits) => {
    const order: number[] = [];
    for (let i = 0; i < logits.length; i++) if (logits[i]! > -Infinity) order.push(i); // top-k may have masked most
    order.sort((a, b) => logits[b]! - logits[a]!);
    const max = logits[order[0]!]!;
    const weights = order.map((i) => Math.exp(logits[i]! - max));
    const total = weights.reduce((s, w) => s + w, 0);
    let mass = 0;
    for (let n = 0; n < order.length; n++) {
      if (mass >= p * total) logits[order[n]!] = -Infinity;
      mass += weights[n]!;
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
