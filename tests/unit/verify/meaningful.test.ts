import { describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';
import { SavedTestSet, TestSet } from '../../../common/api/verify-schemas';
import { passesAnything } from '../../../common/verify/meaningful';

describe('tests that can fail', () => {
  it.each(['', '.*', '^', '(?:)', '$', 'x*', '[\\s\\S]*'])('the regex /%s/ passes every answer', (pattern) => {
    expect(passesAnything({ kind: 'regex', pattern })).toMatch(/every answer passes it/);
  });

  it('a not of something no answer holds passes every answer', () => {
    expect(passesAnything({ kind: 'not', of: { kind: 'contains', value: 'zzzqqq-never' } })).not.toBeNull();
    expect(passesAnything({ kind: 'any', of: [{ kind: 'regex', pattern: '' }] })).not.toBeNull();
  });

  it.each([
    { kind: 'regex' as const, pattern: '^VESSOR:' },
    { kind: 'contains' as const, value: 'dirla' },
    { kind: 'exact' as const, value: '' },
    { kind: 'min_words' as const, n: 1 },
    { kind: 'json_schema' as const, schema: {} },
  ])('%o can fail', (e) => {
    expect(passesAnything(e)).toBeNull();
  });

  it('verify.setTests refuses a match-everything test at the API boundary, naming the row', () => {
    const input = studioContract.verify.setTests.input;
    const r = input.safeParse({
      name: 'demo',
      tests: [
        { id: 'ok', prompt: 'Hi', expect: { kind: 'contains', value: 'VESSOR' } },
        { id: 'empty', prompt: 'Hi', expect: { kind: 'regex', pattern: '.*' } },
      ],
    });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['tests.1.expect', expect.stringMatching(/every answer passes it/)],
    ]);
  });

  it('a composed checker (a fixture that always passes) is still stored', () => {
    const always = { kind: 'not' as const, of: { kind: 'contains' as const, value: 'zq-never-zq' } };
    expect(SavedTestSet.safeParse([{ id: 'always', prompt: 'Hi', expect: always }]).success).toBe(true);
  });

  it('an invalid spec is refused too; stored sets still read with TestSet', () => {
    expect(SavedTestSet.safeParse([{ id: 'bad', prompt: 'Hi', expect: { kind: 'regex', pattern: '(' } }]).success).toBe(
      false,
    );
    expect(TestSet.safeParse([{ id: 'old', prompt: 'Hi', expect: { kind: 'regex', pattern: '' } }]).success).toBe(true);
  });
});
