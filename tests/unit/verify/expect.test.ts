// What a verifier test expects: the SkillWorld checker language (exact, contains, regex and the rest)
// and JSON Schema; the test set's schema at the API boundary.
import { describe, expect, it } from 'vitest';
import { TestSet, VerifierTest } from '../../../common/api/verify-schemas';
import { ExpectSchema, checkExpect } from '../../../common/verify/expect';

describe('checkExpect', () => {
  it('exact, contains and regex follow the SkillWorld checker (normalised answer)', () => {
    expect(checkExpect({ kind: 'exact', value: 'tar -xzf a.tgz' }, '  tar -xzf a.tgz\r\n')).toEqual({
      passed: true,
      reason: null,
    });
    expect(checkExpect({ kind: 'exact', value: 'Yes' }, 'yes').passed).toBe(false);
    expect(checkExpect({ kind: 'exact', value: 'Yes', ignore_case: true }, 'yes').passed).toBe(true);
    expect(checkExpect({ kind: 'contains', value: 'bisect' }, 'run git bisect start').passed).toBe(true);
    expect(checkExpect({ kind: 'contains', value: 'sect', word: true }, 'run git bisect start').passed).toBe(false);
    expect(checkExpect({ kind: 'regex', pattern: '^tar -[a-z]*x' }, 'tar -xzf a').passed).toBe(true);
    const miss = checkExpect({ kind: 'regex', pattern: '^zip' }, 'tar');
    expect(miss).toEqual({ passed: false, reason: 'does not pass: matches /^zip/' });
  });

  it('SkillWorld specs: tool_call, order, all / any / not', () => {
    expect(checkExpect({ kind: 'tool_call', name: 'lookup', args: { id: '7' } }, 'CALL lookup(id="7")').passed).toBe(
      true,
    );
    expect(checkExpect({ kind: 'order', items: ['pack', 'unpack'] }, 'first pack, then unpack').passed).toBe(true);
    expect(
      checkExpect(
        {
          kind: 'all',
          of: [
            { kind: 'contains', value: 'a' },
            { kind: 'not', of: { kind: 'contains', value: 'z' } },
          ],
        },
        'abc',
      ).passed,
    ).toBe(true);
  });

  it('json_schema: the answer (or its one ``` fence) parsed as JSON and checked', () => {
    const e = {
      kind: 'json_schema' as const,
      schema: { type: 'object', required: ['command'], properties: { command: { type: 'string' } } },
    };
    expect(checkExpect(e, '{"command": "tar -xzf a"}')).toEqual({ passed: true, reason: null });
    expect(checkExpect(e, '```json\n{"command": "ls"}\n```')).toEqual({ passed: true, reason: null });
    expect(checkExpect(e, 'Run tar.')).toEqual({ passed: false, reason: 'the answer is not JSON' });
    const wrong = checkExpect(e, '{"command": 3}');
    expect(wrong.passed).toBe(false);
    expect(wrong.reason).toMatch(/^JSON Schema: at command: /);
    expect(checkExpect(e, '{}').reason).toMatch(/^JSON Schema: /);
  });
});

describe('the test schemas', () => {
  const base = { id: 't1', prompt: 'Q?', expect: { kind: 'contains', value: 'x' } };

  it('accepts a prompt or messages (tool turns included), never both or neither', () => {
    expect(VerifierTest.safeParse(base).success).toBe(true);
    expect(
      VerifierTest.safeParse({
        ...base,
        prompt: undefined,
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'CALL f()' },
          { role: 'tool', content: 'r' },
        ],
      }).success,
    ).toBe(true);
    expect(VerifierTest.safeParse({ ...base, messages: [{ role: 'user', content: 'q' }] }).success).toBe(false);
    expect(VerifierTest.safeParse({ ...base, prompt: undefined }).success).toBe(false);
  });

  it('refuses expectations outside the language, unconvertible schemas and duplicate ids', () => {
    expect(ExpectSchema.safeParse({ kind: 'regex', pattern: '(?=x)' }).success).toBe(false); // lookahead: outside the shared subset
    expect(ExpectSchema.safeParse({ kind: 'json_schema', schema: { type: 'object' } }).success).toBe(true);
    const unsupported = ExpectSchema.safeParse({
      kind: 'json_schema',
      schema: { if: { type: 'string' }, then: { minLength: 1 } },
    });
    expect(unsupported.success).toBe(false);
    expect(ExpectSchema.safeParse({ kind: 'json_schema', schema: [] }).success).toBe(false);
    expect(ExpectSchema.safeParse({ kind: 'fuzzy', value: 'x' }).success).toBe(false);
    const dup = TestSet.safeParse([base, base]);
    expect(dup.success).toBe(false);
    expect(dup.error!.issues[0]!.message).toBe('test id "t1" is used twice');
  });
});
