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

  it('reads a language rule into a language checker that passes and fails real answers', () => {
    const [s] = suggestCheckers(SKILL('Always answer in French, whatever language the question is in.'));
    expect(s).toMatchObject({ kind: 'language', expect: { kind: 'language', language: 'fr' }, rewrite: null });
    expect(checkExpect(s!.expect, 'Le rapport est prêt et je vous l’enverrai demain matin.').passed).toBe(true);
    expect(checkExpect(s!.expect, 'The report is ready and I will send it to you tomorrow.').passed).toBe(false);
    const rules = [
      ['Reply only in German.', 'de'],
      ['Write your answers in Spanish.', 'es'],
      ['Translate every request into Dutch', 'nl'],
      ['Answer in English even when the user writes in Italian.', 'en'],
    ] as const;
    for (const [rule, language] of rules)
      expect(
        suggestCheckers(SKILL(rule)).map((x) => x.expect),
        rule,
      ).toEqual([{ kind: 'language', language }]);
    expect(suggestCheckers(SKILL('Mention the French revolution when it fits.'))).toEqual([]);
  });

  it('suggests nothing for prose without a rule it knows, and never a checker that cannot fail', () => {
    expect(suggestCheckers(SKILL('Write good commit messages that explain why.'))).toEqual([]);
  });
});
