// A test's expectation as a rule a person reads ("contains \"tar\"", "not: matches /x/"), for the
// Tests tab and for the reason a failed check gives: never the spec's JSON.
import type { Expect } from './expect';
import { LANGUAGES } from './language';

const quote = (s: string) => JSON.stringify(s);
const anyCase = (e: { ignore_case?: boolean }) => (e.ignore_case ? ' (any case)' : '');

export function describeExpect(e: Expect): string {
  switch (e.kind) {
    case 'exact':
      return `is exactly ${quote(e.value)}${anyCase(e)}`;
    case 'contains':
      return `contains ${e.word ? 'the word ' : ''}${quote(e.value)}${anyCase(e)}`;
    case 'regex':
      return `matches /${e.pattern}/${e.flags ?? ''}`;
    case 'json_schema':
      return 'is JSON matching a schema';
    case 'language':
      return `is written in ${LANGUAGES[e.language]}`;
    case 'tool_call':
      return `calls ${e.name}(${Object.keys(e.args).join(', ')})`;
    case 'order':
      return `names ${e.items.map(quote).join(' then ')}${anyCase(e)}`;
    case 'min_words':
      return `has at least ${e.n} words`;
    case 'not':
      return `not: ${describeExpect(e.of)}`;
    default:
      return e.of.length === 1
        ? describeExpect(e.of[0]!)
        : `${e.kind} of: ${e.of.map((x) => (x.kind === 'all' || x.kind === 'any' ? `(${describeExpect(x)})` : describeExpect(x))).join('; ')}`;
  }
}
