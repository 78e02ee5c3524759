// What a distillation's train steps will hold in memory beside the loaded bundle, estimated before it
// starts (docs/distill.md "Memory before a run"), and the machine's free memory to weigh it against. A
// layered step holds two layers' weights (the one running and the next, read meanwhile) and the head's,
// the input of every layer and what keepPlan lets the forwards keep for
// the backward, one layer's activations and the head on a part of the answer rows; a whole step holds
// its graph's weights and the activations of every layer.
import { readFileSync } from 'node:fs';
import { freemem } from 'node:os';
import { recipeOf } from './distill-recipe';
import { invalid } from './errors';
import type { BundleManifest } from './manifest';
import type { Bucket } from './step-runner';

const MIB = 2 ** 20;
/** The sessions themselves, ORT's arena slack and the step's small buffers, measured nowhere finer. */
const RUNTIME_BYTES = 512 * MIB;
/** ORT keeps an activation's block in its arena after use, and a graph's intermediates outnumber the ones
 * counted below: ×2. With RUNTIME_BYTES the estimate meets what the steps added to the loaded bundle in
 * two runs of bench:distill-scale (8 × 128, answers of 64 tokens): SmolLM2-135M 914 and 1,051 MiB,
 * estimated 1,257; the Qwen2.5-0.5B shape 2,061 and 1,814 MiB, estimated 1,970. */
const ARENA = 2;

/** Answer rows the head takes at once: the head's few [rows, vocab] float32 tensors of a large vocabulary
 * (Qwen2.5's 151,936) are the step's largest, so longer answers go through it in parts of this many
 * rows (the loss is a mean over answer rows: parts weighted by their rows give the same loss and gradient). */
const HEAD_PART_BYTES = 64 * 2 ** 20;
export function headRows(vocab: number): number {
  return Math.max(16, Math.floor(HEAD_PART_BYTES / (vocab * 4)));
}

/** What a layered step may keep beyond two layers' weights (docs/distill.md "Layered train step"): what a
 * layer's forward returns for its backward, so that its backward recomputes no forward (on SmolLM2-135M,
 * 8 × 128, the backward took about 40 % less time). 1.5 GiB holds it for every layer of SmolLM2-135M at
 * 8 × 128 (26 MiB a layer) and of the Qwen2.5-0.5B shape (59 MiB a layer). Layers' weights are read again
 * each step: keeping them bought about 2 % a step for up to 0.5 GB. */
export const KEEP_BYTES = 1.5 * 2 ** 30;

/** One layer's weights as the graphs take them (the largest layer's). */
export function layerWeightBytes(m: BundleManifest): number {
  const layers = m.train_step?.weights?.layers ?? [];
  return Math.max(0, ...layers.map((l) => Object.values(l).reduce((x, s) => x + s.length, 0)));
}

/** What `budget` keeps, top layer first: `saved`, the layers whose forward returns what their backward
 * needs (none in a bucket without layer_bwd; none below the lowest trained layer, which run no backward). */
export function keepPlan(m: BundleManifest, bucket: Bucket, budget = KEEP_BYTES): { saved: number[] } {
  const saved: number[] = [];
  let left = budget;
  const per = bucket.saved_bytes;
  if (bucket.layer_bwd && per !== undefined)
    for (let i = m.architecture.layers - 1; i >= Math.min(...m.lora.layers) && per <= left; i--) {
      saved.push(i);
      left -= per;
    }
  return { saved };
}

export interface MemoryEstimate {
  readonly kind: 'whole' | 'layered';
  /** Everything below together. */
  readonly bytes: number;
  /** Layered: two layers' weights and the head's. */
  readonly weights: number;
  /** One layer's activations (layered) or every layer's (whole). */
  readonly activations: number;
  /** The layer inputs a layered step keeps for its backward, and what the forwards of keepPlan.saved return
   * (0 for whole). */
  readonly kept: number;
  /** The LM head and the loss on the answer rows (layered: on a part of them at a time). */
  readonly head: number;
}

/** Float32 values one decoder layer's forward-and-backward holds per token: the hidden-size tensors
 * (norms, residuals, q, attention output, their gradients), k and v, the SwiGLU's gate, up, product and
 * their gradients, and the attention scores, probabilities and their gradient per head. */
function layerFloatsPerToken(m: BundleManifest, length: number): number {
  const a = m.architecture;
  return 12 * a.hidden + 4 * a.kv_heads * a.head_dim + 6 * a.intermediate + 3 * a.heads * length;
}

/** Peak bytes of a distillation's steps in `bucket` (answers of at most maxAnswerTokens per row). */
export function estimateDistillMemory(
  m: BundleManifest,
  bucket: Bucket,
  maxAnswerTokens = recipeOf(m).max_answer,
  keepBytes = KEEP_BYTES,
): MemoryEstimate {
  const ts = m.train_step;
  if (!ts) throw invalid(`bundle ${m.id} has no train step`);
  const a = m.architecture;
  const tokens = bucket.batch * bucket.length;
  const layerActivations = tokens * layerFloatsPerToken(m, bucket.length) * 4 * ARENA;
  const answerRows = bucket.batch * Math.min(bucket.length, maxAnswerTokens + 1);
  if (ts.kind === 'layered' && ts.weights) {
    // Two layers' weights (the graphs take each span as stored) and the head's, each span once (a tied
    // head is the embedding); the embedding itself is read by rows.
    const layer = layerWeightBytes(m);
    const plan = keepPlan(m, bucket, keepBytes);
    const headSpans = new Map(Object.values(ts.weights.head).map((s) => [`${s.file}:${s.offset}`, s.length]));
    const weights = 2 * layer + [...headSpans.values()].reduce((x, y) => x + y, 0);
    const kept = a.layers * tokens * a.hidden * 4 + plan.saved.length * (bucket.saved_bytes ?? 0);
    const head = Math.min(answerRows, headRows(a.vocab)) * a.vocab * 4 * 3 * ARENA; // logits, softmax, gradient
    return {
      kind: 'layered',
      bytes: weights + layerActivations + kept + head + RUNTIME_BYTES,
      weights,
      activations: layerActivations,
      kept,
      head,
    };
  }
  // Whole: the graph's own file and the weight files it reads (lm.onnx's, train_step.data).
  const files = [bucket.file, ...Object.keys(m.files).filter((f) => /^(lm\.onnx|train_step\.data)/.test(f))];
  const weights = [...new Set(files)].reduce((x, f) => x + (f ? (m.files[f]?.bytes ?? 0) : 0), 0);
  const activations = a.layers * layerActivations;
  const head = answerRows * a.vocab * 4 * 3 * ARENA; // logits, their softmax, their gradient
  return { kind: 'whole', bytes: weights + activations + head + RUNTIME_BYTES, weights, activations, kept: 0, head };
}

/** Memory the machine can give a new allocation now: /proc/meminfo MemAvailable (counts the page cache
 * that can be dropped), else os.freemem(). */
export function freeMemoryBytes(): number {
  try {
    const line = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (line) return Number(line[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;

/** The sentence that refuses a run that does not fit, else null. */
export function memoryRefusal(e: MemoryEstimate, free: number): string | null {
  if (e.bytes <= free) return null;
  const parts =
    e.kind === 'layered'
      ? `two layers' and the head's weights ${gib(e.weights)}, one layer's activations ${gib(e.activations)}, the kept layer inputs and what the forward keeps for the backward ${gib(e.kept)}, the head ${gib(e.head)}`
      : `weights ${gib(e.weights)}, every layer's activations ${gib(e.activations)}, the head ${gib(e.head)}`;
  return `this distillation needs about ${gib(e.bytes)} of memory (${parts}) and this machine has ${gib(free)} free; nothing was started (close other programs, or use a bundle with a layered train step: docs/distill.md)`;
}

/** Throws invalid_input with memoryRefusal's sentence when the run cannot fit. */
export function checkDistillFits(
  m: BundleManifest,
  bucket: Bucket,
  maxAnswerTokens = recipeOf(m).max_answer,
  free = freeMemoryBytes(),
): MemoryEstimate {
  const e = estimateDistillMemory(m, bucket, maxAnswerTokens);
  const why = memoryRefusal(e, free);
  if (why) throw invalid(why, { estimateBytes: e.bytes, freeBytes: free });
  return e;
}
