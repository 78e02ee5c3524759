// Names refuse control characters (C0, DEL, C1), bidi controls and lengths over 128: in
// SKILL.md (an error diagnostic, so the importer skips the file) and at the API.
import { describe, expect, it } from 'vitest';
import { CompareRunInput } from '../../../common/api/engine-schemas';
import { NAME_MAX_CHARS, nameProblem, SkillName } from '../../../common/api/skill-schemas';
import { parseSkillMd } from '../../../main/skills/parse';
import { skillMd } from '../../fixtures/skills/skill-md';

const nameErrors = (content: string, folderName?: string) =>
  parseSkillMd(content, folderName === undefined ? {} : { folderName }).diagnostics.filter(
    (d) => d.code === 'name-invalid',
  );

// YAML double-quoted escapes put the raw characters into the parsed name.
const HOSTILE: [string, string, string][] = [
  ['NUL', '"a\\0b"', 'U+0000'],
  ['ESC', '"x\\e[2J\\e]0;pwned\\a"', 'U+001B'],
  ['BEL', '"ding\\a"', 'U+0007'],
  ['DEL', '"a\\x7Fb"', 'U+007F'],
  ['C1 CSI', '"a\\x9B31m"', 'U+009B'],
  ['RTL override', '"evil\\u202Etxt.exe"', 'U+202E'],
  ['first-strong isolate', '"a\\u2068b"', 'U+2068'],
];

describe('skill names in SKILL.md', () => {
  it.each(HOSTILE)('refuses %s as an error on the name line, naming the code point', (_what, yaml, point) => {
    const errors = nameErrors(skillMd({ name: yaml }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ severity: 'error', line: 2, field: 'name' });
    expect(errors[0]!.message).toContain(point);
    expect(errors[0]!.message).not.toMatch(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/u); // never echoes the raw name
  });

  it(`refuses a name over ${NAME_MAX_CHARS} characters, keeps one of ${NAME_MAX_CHARS}`, () => {
    const long = nameErrors(skillMd({ name: 'a'.repeat(5000) }));
    expect(long).toHaveLength(1);
    expect(long[0]!.message).toMatch(/5,000 characters \(at most 128\)/);
    expect(nameErrors(skillMd({ name: 'a'.repeat(NAME_MAX_CHARS) }))).toEqual([]);
  });

  it('refuses a hostile folder name when the frontmatter has no name', () => {
    expect(nameErrors(skillMd({ name: null }), 'x\u001b[31m')).toMatchObject([{ severity: 'error', field: 'name' }]);
    expect(nameErrors(skillMd({ name: null }), 'plain-folder')).toEqual([]);
  });

  it('keeps every ordinary name', () => {
    for (const name of ['pdf', 'Git Commit Helper', 'sw/handoff', 'café-ü', 'Verification & Quality Assurance']) {
      expect(nameErrors(skillMd({ name }))).toEqual([]);
      expect(nameProblem(name)).toBeNull();
    }
  });
});

describe('SkillName at the API', () => {
  it.each(['a\u202Eb', 'a\u2066b', 'a\u009Bb', 'a\u007Fb', 'x'.repeat(NAME_MAX_CHARS + 1)])('refuses %j', (name) => {
    expect(SkillName.safeParse(name).success).toBe(false);
  });

  it('applies to the other skill compare.run names (wrongSkill)', () => {
    expect(CompareRunInput.safeParse({ name: 'pdf', prompt: 'q', wrongSkill: 'a\u001b[2Jb' }).success).toBe(false);
    expect(CompareRunInput.safeParse({ name: 'pdf', prompt: 'q', wrongSkill: 'docx' }).success).toBe(true);
  });

  it('accepts the longest allowed name', () => {
    expect(SkillName.parse('x'.repeat(NAME_MAX_CHARS))).toHaveLength(NAME_MAX_CHARS);
  });
});
