// Library → New skill: the name check the dialog shows as you type (the API's own SkillName rule, in a
// sentence that names the field) and the call that writes version 1 from the studio's template.
// Plain TypeScript over the API, so the tests run it over the in-memory transport.
import type { StudioApi } from '../../../../common/api/contract';
import { SkillName } from '../../../../common/api/skill-schemas';
import { toUiError, type UiError } from '../shared/errors';

/** What is wrong with `name` as a new skill's name, as one sentence that starts with "Name", or null. */
export function newSkillNameProblem(name: string): string | null {
  const parsed = SkillName.safeParse(name);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'too_small') return 'Name is required: type the name of the new skill.';
  if (issue.code === 'invalid_format') return 'Name starts or ends with a space: remove it.';
  // The rule's own words ("name has the control character U+0009 at position 4"), capitalised.
  const why = issue.message.replace(/^name /, '');
  return `Name ${why}.`;
}

export type CreateOutcome =
  | { ok: true; name: string }
  /** field: the error is about the name (shown under the field); otherwise a notice for the dialog. */
  | { ok: false; field: 'name' | null; error: UiError };

/** Writes version 1 of `name`; a refusal comes back as an outcome, never thrown. */
export async function createSkill(api: Pick<StudioApi, 'skills'>, name: string): Promise<CreateOutcome> {
  const problem = newSkillNameProblem(name);
  if (problem) return { ok: false, field: 'name', error: { code: 'invalid_input', message: problem } };
  try {
    const created = await api.skills.create({ name });
    return { ok: true, name: created.name };
  } catch (err) {
    const error = toUiError(err);
    if (error.code === 'conflict') {
      const message = `Name: a skill named “${name}” already exists. Choose another name, or open that one from the Library.`;
      return { ok: false, field: 'name', error: { ...error, message } };
    }
    if (error.code === 'invalid_input') return { ok: false, field: 'name', error };
    return { ok: false, field: null, error };
  }
}
