// skills.create over each transport against the real services and SQLite: version 1 from the New
// skill template with provenance `template`, a taken name refused with nothing written, a bad name
// refused at the boundary naming the field, and the first edit saved as version 2. Then the Library's
// New skill logic (renderer/src/lib/skills/new-skill.ts) over the in-memory transport.
import { describe, expect, it } from 'vitest';
import { DESCRIPTION_PLACEHOLDER } from '../../../main/skills/template';
import { createSkill, newSkillNameProblem } from '../../../renderer/src/lib/skills/new-skill';
import { failure, studioSuite, transports } from './transports';

describe.each(transports)('skills.create over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-create-');

  it('writes version 1 from the template, written in the studio', async () => {
    const d = await s.api.skills.create({ name: 'review-prs' });
    expect(d).toMatchObject({
      name: 'review-prs',
      description: DESCRIPTION_PLACEHOLDER,
      package: null,
      version: { version: 1, parentVersion: null, provenance: { kind: 'template' } },
    });
    expect(d.content).toMatch(/^---\nname: review-prs\ndescription: /);
    expect(d.parsed.diagnostics.map((x) => x.code)).toEqual(['description-placeholder']);
    expect((await s.api.skills.list({})).map((s) => s.name)).toContain('review-prs');
  });

  it('refuses a name that exists with conflict, and writes nothing', async () => {
    const edited = (await s.api.skills.get({ name: 'review-prs' })).content.replace(
      DESCRIPTION_PLACEHOLDER,
      'Review pull requests.',
    );
    await s.api.skills.save({ name: 'review-prs', content: edited });
    const before = await s.api.skills.get({ name: 'review-prs' });
    const err = await failure(s.api.skills.create({ name: 'review-prs' }));
    expect(err.code).toBe('conflict');
    expect(err.message).toContain('a skill named "review-prs" already exists');
    const after = await s.api.skills.get({ name: 'review-prs' });
    expect(after.history).toEqual(before.history);
    expect(after.content).toBe(edited);
  });

  it.each([
    ['', 'must not be empty'],
    [' padded', 'no leading or trailing whitespace'],
    ['tab\there', 'control character U+0009'],
  ])('refuses the name %j at the boundary, naming the field', async (name, why) => {
    const skills = (await s.api.app.info({})).skills;
    const err = await failure(s.api.skills.create({ name }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain('skills.create: invalid input at "name"');
    expect(err.message).toContain(why);
    expect((await s.api.app.info({})).skills).toBe(skills);
  });

  it('the first edit saved is version 2, edited in the studio', async () => {
    const d = await s.api.skills.create({ name: 'Git Commit Helper' });
    const saved = await s.api.skills.save({
      name: d.name,
      content: d.content.replace(DESCRIPTION_PLACEHOLDER, 'Write commit messages.'),
    });
    expect(saved).toMatchObject({
      created: true,
      version: { version: 2, parentVersion: 1, provenance: { kind: 'manual' } },
    });
    expect((await s.api.skills.get({ name: d.name })).history.map((v) => v.provenance.kind)).toEqual([
      'manual',
      'template',
    ]);
  });
});

describe('the Library’s New skill logic', () => {
  const s = studioSuite(transports[0]!, 'pskills-create-ui-'); // the in-memory pair

  it('says what is wrong with a name in a sentence that names the field, by the API’s rule', () => {
    expect(newSkillNameProblem('review-prs')).toBeNull();
    expect(newSkillNameProblem('Git Commit Helper')).toBeNull();
    expect(newSkillNameProblem('')).toBe('Name is required: type the name of the new skill.');
    expect(newSkillNameProblem('trailing ')).toBe('Name starts or ends with a space: remove it.');
    expect(newSkillNameProblem('a\u202Eb')).toBe('Name has the control character U+202E at position 2.');
    expect(newSkillNameProblem('x'.repeat(129))).toBe('Name has 129 characters (at most 128).');
  });

  it('creates, then refuses the same name under the field, and never calls the API for a bad name', async () => {
    expect(await createSkill(s.api, 'notes')).toEqual({ ok: true, name: 'notes' });
    const again = await createSkill(s.api, 'notes');
    expect(again).toMatchObject({ ok: false, field: 'name', error: { code: 'conflict' } });
    if (!again.ok) expect(again.error.message).toMatch(/^Name: a skill named “notes” already exists\./);
    const calls: string[] = [];
    const spy = {
      skills: { ...s.api.skills, create: (i: { name: string }) => (calls.push(i.name), s.api.skills.create(i)) },
    };
    expect(await createSkill(spy, ' notes')).toMatchObject({ ok: false, field: 'name' });
    expect(calls).toEqual([]);
    expect((await s.api.skills.get({ name: 'notes' })).history).toHaveLength(1);
  });
});
