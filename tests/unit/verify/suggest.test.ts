import { describe, expect, it } from 'vitest';
import { checkExpect } from '../../../common/verify/expect';
import { suggestCheckers } from '../../../common/verify/suggest';

const SKILL = (body: string) => `---\nname: mine\ndescription: Mine.\n---\n# Mine\n\n${body}\n`;

describe('checkers suggested from a skill', () => {
  it('reads a prefix written in plain words, and rewrites it in the example shape', () => {
    const [s] = suggestCheckers(SKILL('Always begin the answer with the word ZORBLAX.'));
    expect(s).toMatchObject({ kind: 'prefix', expect: { kind: 'regex', pattern: '^ZORBLAX' } });
    expect(s!.rewrite).toBe('Prefix the answer with `ZORBLAX:` and keep it on one line.');
    expect(checkExpect(s!.expect, 'ZORBLAX ticket 5521 is noted.').passed).toBe(true);
    expect(checkExpect(s!.expect, 'CALL zORBLAX ticket 5521 is noted.').passed).toBe(false);
  });

  it('reads a quoted prefix, a required word, JSON, one line and a maximum length', () => {
    const got = suggestCheckers(
      SKILL(
        [
          'Prefix the answer with `VESSOR:`.',
          'Always mention "ticket" in the reply.',
          'Reply in JSON.',
          'Keep it on one line.',
          'Use at most 12 words.',
        ].join('\n'),
      ),
    );
    expect(got.map((s) => s.kind)).toEqual(['prefix', 'word', 'format', 'format', 'length']);
    expect(got[0]!.expect).toEqual({ kind: 'regex', pattern: '^VESSOR:' });
    expect(got[1]!.expect).toEqual({ kind: 'contains', value: 'ticket' });
    const length = got[4]!.expect;
    expect(checkExpect(length, 'one two three').passed).toBe(true);
    expect(checkExpect(length, Array.from({ length: 13 }, () => 'w').join(' ')).passed).toBe(false);
  });

  it('suggests nothing for prose without a rule it knows, and never a checker that cannot fail', () => {
    expect(suggestCheckers(SKILL('Write good commit messages that explain why.'))).toEqual([]);
  });
});
