// The SKILL.md a new skill starts from (Library → New skill, `pskills skills create`): the frontmatter
// the Agent Skills spec asks for and the sections skills usually have, each with a one-line hint.
import { stringify } from 'yaml';

/** The description a new skill starts with; the validator warns while it is still there. */
export const DESCRIPTION_PLACEHOLDER = 'Replace this with what the skill does and when an agent should use it.';

const BODY = `
## When to use

The task, or the kind of request, that should make an agent load this skill.

## Steps

1. The first thing to do, in the imperative; name the commands, files or checks it involves.
2. The next step.

## Examples

A request this skill is for, and what a good answer to it looks like.

## Pitfalls

A mistake that is easy to make here, and how to avoid it.
`;

/** Version 1 of a skill called `name`. The frontmatter goes through the YAML writer, so any name the
 *  store takes ("Git Commit Helper", "sw/handoff", "a: b", "123") reads back as the same string. */
export function newSkillMd(name: string): string {
  const frontmatter = stringify({ name, description: DESCRIPTION_PLACEHOLDER }, { lineWidth: 0 });
  return `---\n${frontmatter}---\n\n# ${name}\n${BODY}`;
}
