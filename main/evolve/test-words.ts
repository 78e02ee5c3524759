// Which words a skill's verifier tests use: the words of their prompts and messages (weight 1) and
// every string inside their `expect` specs (weight 3: what the checker looks for is the rule's own
// wording). A section that shares none of them is one "no test uses".
import type { VerifierTest } from '../../common/api/verify-schemas';

const WORD = /[\p{L}\p{N}][\p{L}\p{N}_-]{3,}/gu;

// Common English words that say nothing about which section a test needs.
const STOP = new Set(
  (
    'about after again also always another because been before being between both could does doing during each ' +
    'every from have having here into just like make more most much must never only other over same should some ' +
    'such than that their them then there these they this those through under until very what when where which ' +
    'while with would your yours user users answer reply please skill using used uses need needs want wants ' +
    'write give show tell list explain'
  ).split(' '),
);

/** Lower-cased content words of a text (four letters or more, no stop words). */
export function wordsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(WORD)) if (!STOP.has(m[0])) out.add(m[0]);
  return out;
}

function strings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

export const EXPECT_WEIGHT = 3;

/** Each word the tests use, with its weight. */
export function testWords(tests: readonly VerifierTest[]): Map<string, number> {
  const out = new Map<string, number>();
  const prompts = tests.flatMap((t) => [
    ...(t.prompt !== undefined ? [t.prompt] : []),
    ...(t.messages ?? []).map((m) => m.content),
  ]);
  for (const w of wordsOf(prompts.join('\n'))) out.set(w, 1);
  for (const w of wordsOf(tests.flatMap((t) => strings(t.expect, [])).join('\n'))) out.set(w, EXPECT_WEIGHT);
  return out;
}

/** The summed weight of the test words the text holds. */
export function overlap(text: string, words: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const w of wordsOf(text)) n += words.get(w) ?? 0;
  return n;
}
