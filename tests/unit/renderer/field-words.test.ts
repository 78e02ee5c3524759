// Schema failures and checker specs read as sentences: the field in words, zod's wording turned into
// "must …", and a failed check's reason as a rule, never JSON or a zod path.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeExpect } from '../../../common/verify/describe';
import { checkExpect } from '../../../common/verify/expect';
import { friendlyError } from '../../../renderer/src/lib/shared/errors';
import { fieldWords, issueSentence } from '../../../renderer/src/lib/shared/field-words';

describe('fieldWords', () => {
  it('names the field in words, with the list items it sits in', () => {
    expect(fieldWords('name')).toBe('“name”');
    expect(fieldWords('maxTokens')).toBe('“max tokens”');
    expect(fieldWords('rank_budget')).toBe('“rank budget”');
    expect(fieldWords('sources.0.weight')).toBe('“weight” of source 1');
    expect(fieldWords('tests.2.expect.pattern')).toBe('“pattern” of expect of test 3');
    expect(fieldWords('sources.1')).toBe('source 2');
    expect(fieldWords('')).toBe('the request');
  });
});

describe('issueSentence', () => {
  /** What the dispatcher would say for `value` against `schema`, as the page shows it. */
  const said = (schema: z.ZodType, value: unknown) => {
    const i = schema.safeParse(value).error!.issues[0]!;
    return friendlyError({
      code: 'invalid_input',
      message: `x.y: invalid input at "${i.path.join('.')}": ${i.message}`,
    }).summary;
  };

  it('turns zod 4 messages into sentences about the field', () => {
    expect(said(z.object({ weight: z.number() }), { weight: 'a' })).toBe(
      'The field “weight” must be a number, not text.',
    );
    expect(said(z.object({ weight: z.number() }), {})).toBe('The field “weight” is missing.');
    expect(said(z.object({ name: z.string().min(1) }), { name: '' })).toBe('The field “name” must not be empty.');
    expect(said(z.object({ beta: z.number().max(1) }), { beta: 3 })).toBe('The field “beta” must be at most 1.');
    expect(said(z.object({ rank: z.number().int().min(1) }), { rank: 0 })).toBe('The field “rank” must be at least 1.');
    expect(said(z.object({ rank: z.number().int() }), { rank: 1.5 })).toBe('The field “rank” must be a whole number.');
    expect(said(z.object({ method: z.enum(['cat', 'svd']) }), { method: 'x' })).toBe(
      'The field “method” must be one of "cat", "svd".',
    );
    expect(
      said(z.object({ sources: z.array(z.object({ weight: z.number().max(1e6) })) }), { sources: [{ weight: 3e38 }] }),
    ).toBe('The field “weight” of source 1 must be at most 1,000,000.');
  });

  it('keeps a message it does not know, after the field', () => {
    expect(issueSentence('pattern', "unbalanced '('")).toBe("The field “pattern” was not accepted: unbalanced '('");
  });

  it('never shows a zod path or JSON', () => {
    const s = said(z.object({ tests: z.array(z.object({ expect: z.object({ value: z.string().min(1) }) })) }), {
      tests: [{ expect: { value: '' } }],
    });
    expect(s).toBe('The field “value” of expect of test 1 must not be empty.');
    expect(s).not.toMatch(/\{"|tests\.0/);
  });
});

describe('checker specs as rules', () => {
  it('describes every kind in words', () => {
    expect(describeExpect({ kind: 'contains', value: 'tar', word: true, ignore_case: true })).toBe(
      'contains the word "tar" (any case)',
    );
    expect(describeExpect({ kind: 'min_words', n: 5 })).toBe('has at least 5 words');
    expect(
      describeExpect({
        kind: 'all',
        of: [
          { kind: 'regex', pattern: '^feat' },
          { kind: 'not', of: { kind: 'contains', value: 'WIP' } },
        ],
      }),
    ).toBe('all of: matches /^feat/; not: contains "WIP"');
    expect(describeExpect({ kind: 'any', of: [{ kind: 'exact', value: 'yes' }] })).toBe('is exactly "yes"');
  });

  it('a failed check gives its rule as the reason, not the spec’s JSON', () => {
    const r = checkExpect({ kind: 'order', items: ['read', 'write'] }, 'write then read');
    expect(r).toEqual({ passed: false, reason: 'does not pass: names "read" then "write"' });
  });
});
