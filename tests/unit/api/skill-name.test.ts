// Skill names at the API boundary: every name the importer keeps from the pinned registry packages
// must be reachable (spaces, slashes, capitals occur there), and names that cannot be shown or typed
// back are refused. `name@N` on the command line splits only at a trailing "@digits".
import { describe, expect, it } from 'vitest';
import { SkillRef } from '../../../common/api/adapter-schemas';
import { SkillName } from '../../../common/api/skill-schemas';
import { parseSkillRef } from '../../../main/cli/args';

describe('SkillName', () => {
  it.each([
    'pdf',
    'Git Commit Helper',
    'sw/handoff',
    'Verification & Quality Assurance',
    'Flutter Standard lib/src Architecture (Dependency Rules)',
    'café-ü',
  ])('accepts %j', (name) => {
    expect(SkillName.parse(name)).toBe(name);
    expect(SkillRef.parse({ name, version: 2 })).toEqual({ name, version: 2 });
  });

  it.each(['', ' leading', 'trailing ', 'new\nline', 'tab\there', 'nul\u0000', 'x'.repeat(201)])(
    'refuses %j',
    (name) => {
      expect(SkillName.safeParse(name).success).toBe(false);
    },
  );
});

describe('parseSkillRef', () => {
  it('splits a trailing @N only', () => {
    expect(parseSkillRef('Git Commit Helper@3')).toEqual({ name: 'Git Commit Helper', version: 3 });
    expect(parseSkillRef('pdf')).toEqual({ name: 'pdf' });
    expect(parseSkillRef('@scope/skill')).toEqual({ name: '@scope/skill' });
    expect(parseSkillRef('a@b@12')).toEqual({ name: 'a@b', version: 12 });
  });

  it('refuses version 0', () => {
    expect(() => parseSkillRef('pdf@0')).toThrow(/expected name@N with N ≥ 1/);
  });
});
