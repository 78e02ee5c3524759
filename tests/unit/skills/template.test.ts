// The New skill template (main/skills/template.ts): every name the store takes reads back from its
// frontmatter as the same string, the usual sections are there, and the validator flags the placeholder
// description until it is replaced, and nothing else for a name in the Agent Skills form.
import { describe, expect, it } from 'vitest';
import { parseSkillMd } from '../../../main/skills/parse';
import { DESCRIPTION_PLACEHOLDER, newSkillMd } from '../../../main/skills/template';

const codes = (content: string) => parseSkillMd(content).diagnostics.map((d) => d.code);

describe('newSkillMd', () => {
  it.each(['review-prs', 'Git Commit Helper', 'sw/handoff', 'a: b', '123', 'true', '#tag', "it's", 'café-ü'])(
    'keeps the name %j as written, through YAML',
    (name) => {
      const parsed = parseSkillMd(newSkillMd(name));
      expect(parsed.frontmatter.name).toBe(name);
      expect(parsed.frontmatter.description).toBe(DESCRIPTION_PLACEHOLDER);
      expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    },
  );

  it('has the usual sections, each with a one-line hint', () => {
    const parsed = parseSkillMd(newSkillMd('review-prs'));
    const top = parsed.sections[0]!;
    expect(top.heading).toBe('review-prs');
    expect(top.children.map((s) => s.heading)).toEqual(['When to use', 'Steps', 'Examples', 'Pitfalls']);
    const lines = newSkillMd('review-prs').split('\n');
    for (const s of top.children) expect(lines[s.startLine + 1]!.trim(), s.heading).not.toBe('');
  });

  it('warns about the placeholder description, on its line, until it is replaced', () => {
    const content = newSkillMd('review-prs');
    expect(codes(content)).toEqual(['description-placeholder']);
    const warning = parseSkillMd(content).diagnostics[0]!;
    expect(warning).toMatchObject({ severity: 'warning', field: 'description', line: 3 });
    const replaced = content.replace(DESCRIPTION_PLACEHOLDER, 'Review pull requests for correctness and tests.');
    expect(codes(replaced)).toEqual([]);
  });
});
