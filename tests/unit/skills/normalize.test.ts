import { describe, expect, it } from 'vitest';
import { bodyHash, normalizeBody, sha256 } from '../../../main/skills/normalize';
import { parseSkillMd } from '../../../main/skills/parse';
import { skillMd } from '../../fixtures/skills/skill-md';

describe('sha256', () => {
  it('hashes UTF-8 text to lowercase hex', () => {
    expect(sha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256('é')).toBe(sha256('e\u0301'.normalize('NFC')));
  });
});

describe('bodyHash', () => {
  it('ignores case, wrapping, markdown punctuation and the frontmatter', () => {
    const a = '# Deploy\n\n1. Run **the** tests.\n2. Ship it!\n';
    const b = '## DEPLOY\r\n\r\n1) Run the   tests\n2)   *Ship* it\n';
    expect(normalizeBody(a)).toBe('deploy 1 run the tests 2 ship it');
    expect(bodyHash(a)).toBe(bodyHash(b));
    const one = parseSkillMd(skillMd({ name: 'one', body: a }));
    const two = parseSkillMd(skillMd({ name: 'two', description: 'Other words.', body: b }));
    expect(bodyHash(one)).toBe(bodyHash(two));
    expect(bodyHash(one)).toBe(bodyHash(a));
  });

  it('tells different words apart', () => {
    expect(bodyHash('Run the tests.')).not.toBe(bodyHash('Skip the tests.'));
    expect(bodyHash('Run 1 test')).not.toBe(bodyHash('Run 11 test'));
  });
});
