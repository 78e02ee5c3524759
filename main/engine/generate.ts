// Generation: one loop over forward steps. Rows are left-padded into one batch (pads masked out,
// each row's positions start at 0), every row brings its own adapter, the KV cache carries over,
// and each chosen token is streamed as soon as it is known.
import type { Bundle } from './bundle';
import { invalid } from './errors';
import { KvCache } from './kv-cache';
import { Row, type GenerateRequest, type RowResult, type TokenEvent } from './row';
import { afterPrefix, fromPrefix, runPrefix, sharedLength } from './shared-prefix';

export type { GenerateRequest, RowResult, TokenEvent } from './row';

/** Prompts sharing at least this many leading tokens run them once (a chat template's few are not worth it). */
const SHARE_FROM = 64;

export interface GenerateOptions {
  /** Aborting ends the iteration after the current step; unfinished rows finish as 'cancelled'. */
  readonly signal?: AbortSignal;
}

export interface RowTokenEvent extends TokenEvent {
  readonly row: number;
}

interface StepTokens {
  readonly inputIds: number[];
  readonly positionIds: number[];
  readonly attentionMask: number[];
}

/** The prefill step: prompts right-aligned to the longest, pad slots masked, positions 0.. per row. */
function leftPadded(prompts: readonly (readonly number[])[], pad: number): { step: StepTokens; masks: number[][] } {
  const width = Math.max(...prompts.map((p) => p.length));
  const step: StepTokens = { inputIds: [], positionIds: [], attentionMask: [] };
  const masks = prompts.map((p) => {
    const padding = width - p.length;
    step.inputIds.push(...Array<number>(padding).fill(pad), ...p);
    step.positionIds.push(...Array<number>(padding).fill(0), ...p.map((_, i) => i));
    return [...Array<number>(padding).fill(0), ...Array<number>(p.length).fill(1)];
  });
  step.attentionMask.push(...masks.flat());
  return { step, masks };
}

/** A decode step: each row's last token at its next position; the mask grows by one slot. */
function nextTokens(rows: readonly Row[], masks: number[][], pad: number): StepTokens {
  masks.forEach((m) => m.push(1));
  return {
    inputIds: rows.map((r) => (r.done ? pad : r.tokens.at(-1)!)),
    positionIds: rows.map((r) => r.nextPosition),
    attentionMask: masks.flat(),
  };
}

export async function* generateBatch(
  bundle: Bundle,
  requests: readonly GenerateRequest[],
  options: GenerateOptions = {},
): AsyncGenerator<RowTokenEvent, RowResult[]> {
  const { signal } = options;
  if (requests.length === 0) throw invalid('generateBatch: no requests');
  const rows = requests.map((req, i) => new Row(bundle, req, requests.length > 1 ? i : undefined));
  const lora = bundle.lm.loraFeeds(requests.map((r) => r.adapter ?? null));
  const { pad } = bundle.manifest.special_tokens;
  const vocab = bundle.lm.vocab;
  const batch = rows.length;

  // Prompts that start alike under one adapter (the skill as the system message) run that start once
  // (shared-prefix.ts); the prefill is then each row's rest, not the whole prompt again per row.
  const prompts = rows.map((r) => r.promptIds);
  const adapter = requests[0]!.adapter ?? null;
  const shared = requests.every((r) => (r.adapter ?? null) === adapter) ? sharedLength(prompts) : 0;
  let masks: number[][];
  let step: StepTokens;
  let cache: KvCache;
  if (batch > 1 && shared >= SHARE_FROM) {
    const start = fromPrefix(bundle.manifest, await runPrefix(bundle, prompts[0]!.slice(0, shared), adapter), batch);
    ({ cache, masks } = start);
    const rest = afterPrefix(
      prompts.map((p) => p.slice(shared)),
      shared,
      pad,
      masks,
    );
    step = { ...rest, attentionMask: masks.flat() };
  } else {
    const prefill = leftPadded(prompts, pad);
    masks = prefill.masks;
    step = prefill.step;
    cache = KvCache.empty(bundle.manifest, batch);
  }
  while (!signal?.aborted && rows.some((r) => !r.done)) {
    // Only the last position's logits: a long prompt never materialises [b, s, vocab] (format 2).
    const out = await bundle.lm.forward({ batch, ...step, cache, lora, logitsToKeep: 1 });
    cache = out.cache;
    const seq = out.logitsPerRow;
    for (const [i, row] of rows.entries()) {
      if (row.done || signal?.aborted) continue;
      const last = ((i + 1) * seq - 1) * vocab; // logits of this row's last position
      const event = row.next(out.logits.slice(last, last + vocab));
      yield { row: i, ...event };
    }
    step = nextTokens(rows, masks, pad);
  }
  rows.forEach((r) => r.cancel()); // only rows still running (the signal fired) become 'cancelled'
  return rows.map((r) => r.result());
}

export async function* generate(
  bundle: Bundle,
  request: GenerateRequest,
  options: GenerateOptions = {},
): AsyncGenerator<TokenEvent, RowResult> {
  const inner = generateBatch(bundle, [request], options);
  try {
    for (;;) {
      const next = await inner.next();
      if (next.done) return next.value[0]!;
      yield { tokenId: next.value.tokenId, text: next.value.text };
    }
  } finally {
    await inner.return([]);
  }
}

/** Runs a generation to its end and returns each row's result. */
export async function generateAll(
  bundle: Bundle,
  requests: readonly GenerateRequest[],
  options: GenerateOptions = {},
): Promise<RowResult[]> {
  const it = generateBatch(bundle, requests, options);
  for (;;) {
    const next = await it.next();
    if (next.done) return next.value;
  }
}
