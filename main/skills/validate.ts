// Warnings from the Agent Skills spec (https://agentskills.io/specification) and its
// progressive-disclosure advice: keep SKILL.md under 500 lines / 5,000 words. One error: a name the
// studio cannot show safely (control, bidi or invisible characters, over NAME_MAX_CHARS), so it is never imported.
import {
  NAME_MAX_CHARS,
  newSkillNameProblem as nameProblem,
  type Diagnostic,
  type Frontmatter,
} from '../../common/api/skill-schemas';
import { DESCRIPTION_PLACEHOLDER } from './template';

export const LIMITS = {
  nameChars: 64,
  descriptionChars: 1024,
  compatibilityChars: 500,
  bodyLines: 500,
  bodyWords: 5000,
};
const NAME_FORM = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export function checkFields(
  fm: Frontmatter,
  fields: { fieldLines: Map<string, number>; invalidFields: Set<string> },
  opts: { folderName?: string },
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const warn = (code: string, field: string, message: string) =>
    out.push({ severity: 'warning', code, message, line: fields.fieldLines.get(field) ?? 1, field });

  const badName = (why: string) =>
    out.push({
      severity: 'error',
      code: 'name-invalid',
      message: `${why}; a name has no control, bidi or invisible characters, no '@' and at most ${NAME_MAX_CHARS} characters`,
      line: fields.fieldLines.get('name') ?? 1,
      field: 'name',
    });
  const folderProblem = opts.folderName === undefined ? null : nameProblem(opts.folderName);
  if (fm.name === undefined || fm.name.trim() === '') {
    if (!fields.invalidFields.has('name'))
      warn('name-missing', 'name', "the frontmatter has no 'name'; the folder name is used instead");
    if (folderProblem) badName(`the folder name, used as the skill's name, ${folderProblem}`);
  } else if (nameProblem(fm.name.trim())) {
    badName(`name ${nameProblem(fm.name.trim())!}`); // the other name checks would quote it
  } else {
    const name = fm.name;
    if (name.length > LIMITS.nameChars)
      warn('name-too-long', 'name', `name has ${name.length} characters (at most ${LIMITS.nameChars})`);
    if (!NAME_FORM.test(name)) {
      warn(
        'name-format',
        'name',
        `name '${name}' should be lowercase letters, digits and single hyphens, not starting or ending with a hyphen`,
      );
    }
    if (opts.folderName !== undefined && !folderProblem && opts.folderName !== name) {
      warn('name-folder-mismatch', 'name', `name '${name}' does not match its folder '${opts.folderName}'`);
    }
  }
  if (fm.description === undefined || fm.description.trim() === '') {
    if (!fields.invalidFields.has('description'))
      warn(
        'description-missing',
        'description',
        "the frontmatter has no 'description'; agents use it to decide when to load the skill",
      );
  } else if (fm.description.trim() === DESCRIPTION_PLACEHOLDER) {
    warn(
      'description-placeholder',
      'description',
      "the description is still the New skill template's placeholder: say what the skill does and when to use it",
    );
  } else if (fm.description.length > LIMITS.descriptionChars) {
    warn(
      'description-too-long',
      'description',
      `description has ${fm.description.length} characters (at most ${LIMITS.descriptionChars})`,
    );
  }
  if (fm.compatibility !== undefined && fm.compatibility.length > LIMITS.compatibilityChars) {
    warn(
      'compatibility-too-long',
      'compatibility',
      `compatibility has ${fm.compatibility.length} characters (at most ${LIMITS.compatibilityChars})`,
    );
  }
  return out;
}

export function checkBody(body: string, bodyStartLine: number, bodyLines: number): Diagnostic[] {
  const out: Diagnostic[] = [];
  const warn = (code: string, message: string) => out.push({ severity: 'warning', code, message, line: bodyStartLine });
  if (body.trim() === '') {
    warn('body-empty', 'the body after the frontmatter is empty');
    return out;
  }
  if (bodyLines > LIMITS.bodyLines)
    warn(
      'body-too-many-lines',
      `the body has ${bodyLines} lines (over ${LIMITS.bodyLines}); move detail into reference files`,
    );
  const words = body.split(/\s+/).filter(Boolean).length;
  if (words > LIMITS.bodyWords)
    warn('body-too-many-words', `the body has ${words} words (over 5,000); move detail into reference files`);
  return out;
}
