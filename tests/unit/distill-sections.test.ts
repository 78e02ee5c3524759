// The long-skill teacher's section choice against the shared cases (tests/fixtures/practice-cases.json
// "sections", written by training/tests/practice_cases.py from distill/sections.py).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SectionIndex, splitSections } from '../../common/distill/sections';

const { sections } = JSON.parse(readFileSync(join(process.cwd(), 'tests/fixtures/practice-cases.json'), 'utf8')) as {
  sections: {
    text: string;
    split: string[];
    cases: { query: string; budget: number; scores: number[]; focused: string }[];
  };
};
const words = (t: string) => t.split(/\s+/).filter(Boolean).length;

describe('the sections a question needs (shared with Python)', () => {
  it('cuts the skill where Python does, fenced "##" lines included in their section', () => {
    expect(splitSections(sections.text)).toEqual(sections.split);
    expect(splitSections(sections.text).join('')).toBe(sections.text);
  });

  it('scores every section as Python does and keeps the same ones', () => {
    expect(sections.cases.length).toBeGreaterThan(5);
    for (const c of sections.cases) {
      const got = new SectionIndex(sections.text, words).scores(c.query);
      got.forEach((s, i) => expect(s).toBeCloseTo(c.scores[i]!, 10));
      expect(new SectionIndex(sections.text, words).focused(c.query, c.budget)).toBe(c.focused);
    }
    // a query that shares words with one section keeps the head and that section
    const one = sections.cases.find((c) => c.query.startsWith('Keep it true') && c.budget < 1000)!;
    expect(one.focused.startsWith(sections.split[0]!) && one.focused.includes('## Keep it true')).toBe(true);
    expect(one.focused.length).toBeLessThan(sections.text.length);
  });
});
