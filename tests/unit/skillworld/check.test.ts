// The TypeScript checker against the case file the Python checker also runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '../../../common/skillworld/check';

interface Case {
  name: string;
  spec: unknown;
  answer: string;
  expect: boolean | 'error';
}
const { cases } = JSON.parse(
  readFileSync(join(process.cwd(), 'tests/fixtures/skillworld/checker-cases.json'), 'utf8'),
) as { cases: Case[] };

describe('SkillWorld checker (shared cases)', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThan(50));
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    if (c.expect === 'error') expect(() => check(c.spec, c.answer)).toThrow();
    else expect(check(c.spec, c.answer)).toBe(c.expect);
  });
});
