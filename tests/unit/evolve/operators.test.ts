// The offline generator's edit operators: each changes the body deterministically, keeps the
// frontmatter byte for byte and leaves a SKILL.md the parser accepts; the generator's candidates
// follow its key.
import { describe, expect, it } from 'vitest';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { applyOperator, OPERATORS, type OperatorName } from '../../../main/evolve/operators';
import { offlineProposals } from '../../../main/evolve/offline-generator';
import { seededRandom } from '../../../main/evolve/random';
import { readSkill, writeSkill } from '../../../main/evolve/skill-text';
import { testWords } from '../../../main/evolve/test-words';
import { parseSkillMd } from '../../../main/skills/parse';

const FRONT = '---\nname: zorbel-reports\ndescription: Write zorbel reports for the team.\nlicense: MIT\n---\n';
const SKILL = `${FRONT}
# Zorbel reports

Reports the team sends every week.

## When to use

Use this when someone asks for a weekly report.

## Background

The archive keeps older reports in folders by quarter.
Folders are named after the quarter.

## Steps

1. Collect the numbers.
2. Collect the numbers.
3. Write the summary.

\`\`\`sh
## not a heading
- not a rule
\`\`\`

## Pitfalls

- Do not guess numbers.

## Output format

- Start every answer with the codeword QUIBBLE.
- End with a line "signed: zorbel".
`;

const TESTS: VerifierTest[] = [
  {
    id: 'codeword',
    prompt: 'Write the weekly zorbel report.',
    expect: { kind: 'contains', value: 'QUIBBLE' },
  },
];

const ctx = (key = 'k') => ({ words: testWords(TESTS), random: seededRandom(key) });

function sameFrontAndValid(text: string): void {
  expect(text.startsWith(FRONT)).toBe(true);
  const parsed = parseSkillMd(text);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  expect(parsed.frontmatter).toMatchObject({
    name: 'zorbel-reports',
    description: 'Write zorbel reports for the team.',
  });
}

const headings = (text: string) => readSkill(text).sections.map((s) => s.heading);

describe('skill text', () => {
  it('reads and writes a SKILL.md back byte for byte; code fences hold no structure', () => {
    expect(writeSkill(readSkill(SKILL))).toBe(SKILL);
    expect(writeSkill(readSkill(SKILL.trimEnd()))).toBe(SKILL.trimEnd());
    expect(headings(SKILL)).toEqual(['## When to use', '## Background', '## Steps', '## Pitfalls', '## Output format']);
  });
});

describe('operators', () => {
  it('move_rule_up puts the section the tests use first', () => {
    const edit = applyOperator('move_rule_up', SKILL, ctx())!;
    expect(edit.note).toBe('moved "Output format" to the top');
    expect(headings(edit.text)[0]).toBe('## Output format');
    expect(headings(edit.text)).toHaveLength(5);
    sameFrontAndValid(edit.text);
    // Applied again, the first section is already the one: nothing to do.
    expect(applyOperator('move_rule_up', edit.text, ctx())).toBeNull();
  });

  it('checklist restates the rules tests touch as a checklist before every section', () => {
    const edit = applyOperator('checklist', SKILL, ctx())!;
    const first = readSkill(edit.text).sections[0]!;
    expect(first.heading).toBe('## Checklist');
    expect(first.lines.filter((l) => l.startsWith('- [ ]'))).toEqual([
      '- [ ] Start every answer with the codeword QUIBBLE.',
      '- [ ] End with a line "signed: zorbel".',
    ]);
    expect(edit.text).toContain('## Output format\n\n- Start every answer'); // the originals stay
    sameFrontAndValid(edit.text);
    expect(applyOperator('checklist', edit.text, ctx())).toBeNull();
  });

  it('drop_unused drops every section that shares no word with a test', () => {
    const edit = applyOperator('drop_unused', SKILL, ctx())!;
    expect(headings(edit.text)).toEqual(['## When to use', '## Output format']);
    expect(edit.note).toMatch(/^dropped 3 sections no test uses: "Background", "Steps", "Pitfalls"$/);
    sameFrontAndValid(edit.text);
    // Without tests there is no telling which sections are unused.
    expect(applyOperator('drop_unused', SKILL, { words: new Map(), random: seededRandom('k') })).toBeNull();
  });

  it('merge_duplicates drops a repeated rule and merges sections with the same heading', () => {
    const edit = applyOperator('merge_duplicates', SKILL, ctx())!;
    expect(edit.note).toBe('dropped 1 repeated line');
    expect(edit.text.match(/Collect the numbers/g)).toHaveLength(1);
    expect(edit.text).toContain('## not a heading\n- not a rule'); // code is left alone
    sameFrontAndValid(edit.text);

    const twice = `${SKILL}\n## Pitfalls\n\n- Never send a report twice.\n`;
    const merged = applyOperator('merge_duplicates', twice, ctx())!;
    expect(merged.note).toBe('merged 1 section with a repeated heading; dropped 1 repeated line');
    expect(headings(merged.text).filter((h) => h === '## Pitfalls')).toHaveLength(1);
    expect(merged.text).toContain('- Do not guess numbers.\n\n- Never send a report twice.');
    sameFrontAndValid(merged.text);
  });

  it.each(OPERATORS)('%s gives the same text every time and never touches the frontmatter', (op: OperatorName) => {
    const a = applyOperator(op, SKILL, ctx('x'));
    const b = applyOperator(op, SKILL, ctx('x'));
    expect(a).not.toBeNull();
    expect(a).toEqual(b);
    sameFrontAndValid(a!.text);
  });

  it('a skill without frontmatter keeps its (missing) frontmatter: operators work on the body only', () => {
    const bare = SKILL.slice(FRONT.length);
    const edit = applyOperator('move_rule_up', bare, ctx())!;
    expect(edit.text.startsWith('\n# Zorbel reports\n')).toBe(true);
    expect(headings(edit.text)[0]).toBe('## Output format');
  });
});

describe('offline generator', () => {
  it('proposes distinct candidates, the same for the same key, in another order for another key', () => {
    const input = { parent: SKILL, tests: TESTS, count: 6, key: '0:1' };
    const a = offlineProposals(input);
    expect(a).toHaveLength(6);
    expect(new Set(a.map((p) => p.text)).size).toBe(6);
    expect(a.every((p) => p.text !== SKILL)).toBe(true);
    expect(offlineProposals(input)).toEqual(a);
    expect(a.slice(0, 4).every((p) => !p.operator.includes('+'))).toBe(true); // single operators first
    const b = offlineProposals({ ...input, key: '7:1' });
    expect(b.map((p) => p.operator)).not.toEqual(a.map((p) => p.operator));
    for (const p of [...a, ...b]) sameFrontAndValid(p.text);
  });
});
