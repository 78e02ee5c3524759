import { describe, expect, it } from 'vitest';
import { ParsedSkill } from '../../../common/api/skill-schemas';
import { parseSkillMd } from '../../../main/skills/parse';
import { ENGLISH_BODY, skillMd } from '../../fixtures/skills/skill-md';

const codes = (content: string, folderName?: string) =>
  parseSkillMd(content, folderName === undefined ? {} : { folderName }).diagnostics.map((d) => d.code);
const only = (content: string, code: string) => parseSkillMd(content).diagnostics.filter((d) => d.code === code);

describe('parseSkillMd frontmatter', () => {
  it('reads the spec fields and keeps unknown ones in extra', () => {
    const p = parseSkillMd(
      skillMd({
        extra:
          'license: Apache-2.0\ncompatibility: Node 20\nmetadata:\n  author: ana\n  tier: 2\nversion: 2.9.0\nx-team: [a, b]',
      }),
    );
    expect(p.diagnostics).toEqual([]);
    expect(p.frontmatter).toEqual({
      name: 'review-prs',
      description: 'Review a pull request for correctness and tests.',
      license: 'Apache-2.0',
      compatibility: 'Node 20',
      metadata: { author: 'ana', tier: 2 },
      extra: { version: '2.9.0', 'x-team': ['a', 'b'] },
    });
    expect(p.bodyStartLine).toBe(12); // 10 frontmatter lines, the closing ---, then the body
    expect(p.body).toBe(ENGLISH_BODY);
  });

  it('reads allowed-tools written as a string or as a list', () => {
    const asString = parseSkillMd(skillMd({ extra: 'allowed-tools: Read Grep  Bash(git add:*), Write' }));
    expect(asString.frontmatter.allowedTools).toEqual(['Read', 'Grep', 'Bash(git add:*)', 'Write']);
    const asList = parseSkillMd(skillMd({ extra: 'allowed-tools:\n  - Read\n  - Bash(npm test)' }));
    expect(asList.frontmatter.allowedTools).toEqual(['Read', 'Bash(npm test)']);
    expect(asList.frontmatter.extra).toEqual({});
  });

  it('puts YAML errors on the line of the file where they are', () => {
    const dup = parseSkillMd('---\nname: a\ndescription: b\nname: c\n---\nbody\n').diagnostics;
    expect(dup).toMatchObject([{ severity: 'error', code: 'yaml-invalid', line: 4, column: 1 }]);
    expect(dup[0]?.message).toMatch(/unique/);
    const colon = parseSkillMd('---\nname: a\n\ndescription: Use when: deploying\n---\nbody\n').diagnostics;
    expect(colon).toMatchObject([{ severity: 'error', code: 'yaml-invalid', line: 4, column: 14 }]);
    const crlf = parseSkillMd('---\r\nname: a\r\ndescription: b\r\nname: c\r\n---\r\nbody\r\n').diagnostics;
    expect(crlf).toMatchObject([{ code: 'yaml-invalid', line: 4 }]);
  });

  it('reports missing, unterminated and non-mapping frontmatter as errors on their line', () => {
    expect(only('# Just markdown\n', 'frontmatter-missing')).toMatchObject([{ severity: 'error', line: 1 }]);
    expect(only('---\nname: a\ndescription: b\n# never closed\n', 'frontmatter-unterminated')).toMatchObject([
      { severity: 'error', line: 1 },
    ]);
    expect(only('---\n- a\n- b\n---\nbody\n', 'frontmatter-not-mapping')).toMatchObject([
      { severity: 'error', line: 2 },
    ]);
    expect(only('---\njust a string\n---\nbody\n', 'frontmatter-not-mapping')[0]?.message).toMatch(/got a string/);
  });

  it('reports wrong field types with the field and its line', () => {
    const d = parseSkillMd(
      '---\nname: [x]\ndescription: 5\nmetadata: flat\nallowed-tools: {a: 1}\nlicense: true\n---\nbody\n',
    ).diagnostics;
    expect(d.map((x) => [x.code, x.field, x.line])).toEqual([
      ['field-type', 'name', 2],
      ['field-type', 'description', 3],
      ['field-type', 'metadata', 4],
      ['field-type', 'allowed-tools', 5],
      ['field-type', 'license', 6],
    ]);
    expect(d.every((x) => x.severity === 'error')).toBe(true);
  });

  it('accepts a byte-order mark and CRLF line ends', () => {
    const p = parseSkillMd('\uFEFF---\r\nname: a\r\ndescription: b\r\n---\r\n# H\r\ntext\r\n');
    expect(p.diagnostics).toEqual([]);
    expect(p.frontmatter.name).toBe('a');
    expect(p.sections).toEqual([{ heading: 'H', level: 1, startLine: 5, endLine: 6, children: [] }]);
  });
});

describe('parseSkillMd warnings', () => {
  it('warns about a missing name or description at the opening line', () => {
    expect(only(skillMd({ name: null }), 'name-missing')).toMatchObject([
      { severity: 'warning', line: 1, field: 'name' },
    ]);
    expect(only(skillMd({ description: null }), 'description-missing')).toMatchObject([
      { severity: 'warning', field: 'description' },
    ]);
    expect(codes(skillMd({ description: "''" }))).toContain('description-missing');
  });

  it('warns about a name over 64 characters, in the wrong form, or unlike its folder', () => {
    const long = 'a'.repeat(65);
    expect(only(skillMd({ name: long }), 'name-too-long')).toMatchObject([
      { line: 2, message: expect.stringContaining('65') },
    ]);
    expect(codes(skillMd({ name: 'a'.repeat(64) }))).not.toContain('name-too-long');
    for (const bad of ['Review-PRs', 'review_prs', '-review', 'review--prs', 'review-']) {
      expect(codes(skillMd({ name: bad })), bad).toContain('name-format');
    }
    expect(codes(skillMd({ name: 'review-prs-2' }))).not.toContain('name-format');
    expect(codes(skillMd({ name: 'review-prs' }), 'pr-review')).toContain('name-folder-mismatch');
    expect(codes(skillMd({ name: 'review-prs' }), 'review-prs')).not.toContain('name-folder-mismatch');
  });

  it('says which limit an oversized body breaks', () => {
    const manyLines = parseSkillMd(skillMd({ body: 'x\n'.repeat(501) })).diagnostics;
    expect(manyLines.map((d) => d.code)).toEqual(['body-too-many-lines']);
    expect(manyLines[0]).toMatchObject({ line: 5, message: expect.stringContaining('501 lines') });
    expect(codes(skillMd({ body: 'x\n'.repeat(500) }))).toEqual([]);
    const manyWords = parseSkillMd(skillMd({ body: 'word '.repeat(5001) })).diagnostics;
    expect(manyWords.map((d) => d.code)).toEqual(['body-too-many-words']);
    expect(manyWords[0]?.message).toContain('5001 words');
  });

  it('warns about an empty body', () => {
    expect(only(skillMd({ body: '\n  \n' }), 'body-empty')).toMatchObject([{ severity: 'warning', line: 5 }]);
    expect(only('---\nname: a\ndescription: b\n---', 'body-empty')).toMatchObject([{ line: 4 }]);
  });
});

describe('parseSkillMd sections', () => {
  it('builds a tree with file line ranges and ignores # lines inside code fences', () => {
    const body = [
      '# Deploy', // 5
      'intro',
      '## Steps', // 7
      '```bash',
      '# not a heading',
      '```',
      '### Detail', // 11
      'more',
      '## Pitfalls', // 13
      '~~~',
      '## still code',
      '~~~',
      '# Appendix', // 17
      'end',
      '',
    ].join('\n');
    const p = parseSkillMd(skillMd({ body }));
    expect(p.sections).toEqual([
      {
        heading: 'Deploy',
        level: 1,
        startLine: 5,
        endLine: 16,
        children: [
          {
            heading: 'Steps',
            level: 2,
            startLine: 7,
            endLine: 12,
            children: [{ heading: 'Detail', level: 3, startLine: 11, endLine: 12, children: [] }],
          },
          { heading: 'Pitfalls', level: 2, startLine: 13, endLine: 16, children: [] },
        ],
      },
      { heading: 'Appendix', level: 1, startLine: 17, endLine: 18, children: [] },
    ]);
  });

  it('takes heading text without markup and handles setext headings and skipped levels', () => {
    const p = parseSkillMd(skillMd({ body: 'Title\n=====\n\n### Use `npm ci` *first*\n\n## [Links](http://x.y)\n' }));
    expect(p.sections.map((s) => [s.heading, s.startLine, s.endLine])).toEqual([['Title', 5, 10]]);
    expect(p.sections[0]?.children.map((s) => [s.heading, s.level, s.startLine, s.endLine])).toEqual([
      ['Use npm ci first', 3, 8, 9],
      ['Links', 2, 10, 10],
    ]);
  });
});

describe('parseSkillMd on any input', () => {
  it('never throws and always returns a valid ParsedSkill', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = [
      '---',
      '\n',
      '\r\n',
      '\r',
      ':',
      ' ',
      '#',
      '`',
      '```',
      '- ',
      '[',
      ']',
      '{',
      '&a',
      '*a',
      '!!',
      'name',
      'é',
      '漢',
      '\uFEFF',
      '\0',
      '"',
      "'",
      '|',
      '>',
    ];
    const inputs = ['', '---', '---\n---', '---\n---\n', '\n\n\n', '---\n&a [*a, *a]\n---\n'];
    for (let i = 0; i < 400; i++) {
      const parts = Array.from(
        { length: Math.floor(rand() * 40) },
        () => alphabet[Math.floor(rand() * alphabet.length)],
      );
      inputs.push(parts.join(''));
    }
    for (const input of inputs) {
      const parsed = parseSkillMd(input);
      expect(() => ParsedSkill.parse(parsed), JSON.stringify(input)).not.toThrow();
      expect(
        parsed.diagnostics.filter((d) => d.code === 'internal'),
        JSON.stringify(input),
      ).toEqual([]);
    }
  });
});
