// Reading, validating and saving skills: the parser in front of the store.
import type { SkillDetail, ParsedSkill, SkillSummary, VersionMeta } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import { bodyHash } from '../../skills/normalize';
import { parseSkillMd } from '../../skills/parse';
import { newSkillMd } from '../../skills/template';
import type { SkillsRepo } from '../../store/skills-repo';

const folderOf = (path: string): string | undefined => path.split('/').slice(-2, -1)[0];

export class SkillService {
  constructor(private readonly repo: SkillsRepo) {}

  list(input: { query?: string; package?: string }): SkillSummary[] {
    return this.repo.list(input);
  }

  packages(): { package: string; skills: number }[] {
    return this.repo.packages();
  }

  get(input: { name: string; version?: number }): SkillDetail {
    const row = this.repo.get(input.name, input.version);
    if (!row) {
      const what = input.version ? `${input.name}@${input.version}` : input.name;
      throw new StudioError('not_found', `no skill "${what}"`);
    }
    const p = row.version.provenance;
    const folderName = 'path' in p ? folderOf(p.path) : undefined;
    return { ...row, parsed: parseSkillMd(row.content, { folderName }), history: this.repo.history(input.name) };
  }

  validate(input: { content: string; folderName?: string }): ParsedSkill {
    return parseSkillMd(input.content, { folderName: input.folderName });
  }

  /** The skill and all its versions; refused while adapters compiled from it exist (SkillsRepo.delete). */
  delete(input: { name: string }): { deleted: string; versions: number } {
    return { deleted: input.name, versions: this.repo.delete(input.name) };
  }

  /** Version 1 of a new skill from the New skill template (provenance `template`); refused with
   *  `conflict`, nothing written, when the name is taken. The skill as `get` returns it. */
  create(input: { name: string }): SkillDetail {
    const content = newSkillMd(input.name);
    const parsed = parseSkillMd(content);
    this.repo.create(
      input.name,
      content,
      parsed.frontmatter.description ?? '',
      { kind: 'template' },
      bodyHash(parsed.body),
    );
    return this.get({ name: input.name });
  }

  /** Saves content as the skill's next version; identical content makes none. */
  save(input: { name: string; content: string }): { version: VersionMeta; created: boolean; parsed: ParsedSkill } {
    const parsed = parseSkillMd(input.content);
    const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      const first = errors[0]!;
      throw new StudioError('bad_skill', `${input.name}: line ${first.line}: ${first.message}`, {
        diagnostics: errors,
      });
    }
    const { version, created } = this.repo.save(
      input.name,
      input.content,
      parsed.frontmatter.description ?? '',
      { kind: 'manual' },
      bodyHash(parsed.body),
    );
    return { version, created, parsed };
  }
}
