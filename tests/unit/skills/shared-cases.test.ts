// The cases both test suites run (tests/fixtures/skills/shared-cases.json): the TypeScript gives
// `expect` on every case; the Python copies of these rules (training/…/data/filters.py, skill_md.py)
// are checked against the same file by training/tests/test_shared_cases.py, divergences flagged there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectNonEnglish } from '../../../main/skills/filters';
import { normalizeBody } from '../../../main/skills/normalize';
import { parseSkillMd } from '../../../main/skills/parse';

interface Divergence {
  python: unknown;
  why: string;
}
interface Cases {
  language: { id: string; body: string; expect: string | null; divergence?: Divergence }[];
  normalize: { text: string; expect: string }[];
  frontmatter: {
    id: string;
    content: string;
    error: boolean;
    fields?: Record<string, string>;
    divergence?: Divergence;
  }[];
}

const cases = JSON.parse(readFileSync(join(process.cwd(), 'tests/fixtures/skills/shared-cases.json'), 'utf8')) as Cases;

describe('shared importer cases (TypeScript side)', () => {
  it.each(cases.language.map((c) => [c.id, c] as const))('language: %s', (_id, c) => {
    expect(detectNonEnglish(c.body)).toBe(c.expect);
  });

  it('normalize', () => {
    for (const c of cases.normalize) expect(normalizeBody(c.text), JSON.stringify(c.text)).toBe(c.expect);
  });

  it.each(cases.frontmatter.map((c) => [c.id, c] as const))('frontmatter: %s', (_id, c) => {
    const parsed = parseSkillMd(c.content);
    expect(parsed.diagnostics.some((d) => d.severity === 'error')).toBe(c.error);
    if (c.fields) {
      const { name, description, license } = parsed.frontmatter;
      const got = Object.fromEntries(Object.entries({ name, description, license }).filter(([, v]) => v !== undefined));
      expect(got).toEqual(c.fields);
    }
  });

  it('flags every divergence with a reason', () => {
    const flagged = [...cases.language, ...cases.frontmatter].filter((c) => c.divergence);
    expect(flagged.length).toBeGreaterThan(0);
    for (const c of flagged) expect(c.divergence!.why.length, c.id).toBeGreaterThan(20);
  });
});
