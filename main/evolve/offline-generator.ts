// The offline generator: candidates are the parent rewritten by one operator, then by two in a row,
// in an order drawn from the run's seed and the iteration. The same parent, tests and key give the
// same candidates; texts equal to the parent, to an earlier candidate or to one the run already
// holds are skipped.
import { applyOperator, OPERATORS, type OperatorName } from './operators';
import type { Generator, Proposal, ProposeInput } from './generator';
import { seededRandom, shuffled } from './random';
import { testWords } from './test-words';

export class OfflineGenerator implements Generator {
  readonly kind = 'offline';

  propose(input: ProposeInput): Promise<Proposal[]> {
    return Promise.resolve(offlineProposals(input));
  }
}

export function offlineProposals(
  input: Pick<ProposeInput, 'parent' | 'tests' | 'count' | 'key' | 'exclude'>,
): Proposal[] {
  const random = seededRandom(`evolve:${input.key}`);
  const ctx = { words: testWords(input.tests), random };
  const singles = shuffled(OPERATORS, random).map((op) => [op]);
  const pairs = shuffled(
    OPERATORS.flatMap((a) => OPERATORS.filter((b) => b !== a).map((b) => [a, b])),
    random,
  );
  const seen = new Set([input.parent, ...(input.exclude ?? [])]);
  const out: Proposal[] = [];
  for (const chain of [...singles, ...pairs] as OperatorName[][]) {
    if (out.length >= input.count) break;
    let text = input.parent;
    const notes: string[] = [];
    for (const op of chain) {
      const edit = applyOperator(op, text, ctx);
      if (!edit) break;
      text = edit.text;
      notes.push(edit.note);
    }
    if (notes.length !== chain.length || seen.has(text)) continue;
    seen.add(text);
    out.push({ text, operator: chain.join('+'), note: notes.join('; then ') });
  }
  return out;
}
