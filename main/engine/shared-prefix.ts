// Rows whose prompts start alike (the skill as the system message, the chat template) run that start once:
// its KV cache, computed for one row, is copied to every row, and each row's rest follows it with pads
// between (masked), positions continuing from the prefix. The teacher's answers, its teacher-forced rows
// and batched generation (self-written practice) share it (docs/distill.md "Teacher pass").
import type { EngineAdapter } from './adapter';
import type { Bundle } from './bundle';
import { KvCache } from './kv-cache';
import type { BundleManifest } from './manifest';

/** The tokens every prompt starts with, keeping at least one token of each for the step after them. */
export function sharedLength(prompts: readonly (readonly number[])[]): number {
  if (prompts.length === 0) return 0;
  let shared = Math.min(...prompts.map((p) => p.length)) - 1;
  for (const p of prompts) {
    let j = 0;
    while (j < shared && p[j] === prompts[0]![j]) j++;
    shared = j;
  }
  return Math.max(0, shared);
}

/** A prefix run once for one row; `cache` null when it is empty. */
export interface Prefix {
  readonly length: number;
  readonly cache: KvCache | null;
}

export async function runPrefix(
  bundle: Bundle,
  tokens: readonly number[],
  adapter: EngineAdapter | null = null,
): Promise<Prefix> {
  if (tokens.length === 0) return { length: 0, cache: null };
  const out = await bundle.lm.forward({
    batch: 1,
    inputIds: tokens,
    positionIds: tokens.map((_, i) => i),
    attentionMask: tokens.map(() => 1),
    cache: KvCache.empty(bundle.manifest, 1),
    lora: bundle.lm.loraFeeds([adapter]),
    logitsToKeep: 1,
  });
  return { length: tokens.length, cache: out.cache };
}

/** The prefix's cache for `rows` rows, and each row's attention mask over it. */
export function fromPrefix(m: BundleManifest, prefix: Prefix, rows: number): { cache: KvCache; masks: number[][] } {
  return {
    cache: prefix.cache ? prefix.cache.rows(new Array<number>(rows).fill(0)) : KvCache.empty(m, rows),
    masks: Array.from({ length: rows }, () => new Array<number>(prefix.length).fill(1)),
  };
}

/** The step after the prefix: each row's `rests[i]` right-aligned to the longest (pads first, masked),
 * positions from the prefix's length; appends each row's mask. */
export function afterPrefix(
  rests: readonly (readonly number[])[],
  prefixLength: number,
  pad: number,
  masks: number[][],
): { inputIds: number[]; positionIds: number[] } {
  const width = Math.max(...rests.map((r) => r.length));
  const inputIds: number[] = [];
  const positionIds: number[] = [];
  rests.forEach((rest, i) => {
    for (let t = rest.length; t < width; t++) {
      inputIds.push(pad);
      positionIds.push(0);
      masks[i]!.push(0);
    }
    rest.forEach((id, t) => {
      inputIds.push(id);
      positionIds.push(prefixLength + t);
      masks[i]!.push(1);
    });
  });
  return { inputIds, positionIds };
}
