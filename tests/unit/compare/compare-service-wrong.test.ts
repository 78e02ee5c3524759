// CompareService.wrongSkillFor: the dissimilar skill by default (not the next name), the asked one otherwise.
import { describe, expect, it } from 'vitest';
import { CompareService } from '../../../main/api/services/compare-service';
import type { CompileService } from '../../../main/api/services/compile-service';
import type { EngineService } from '../../../main/api/services/engine-service';
import type { SkillsRepo } from '../../../main/store/skills-repo';

const summary = (name: string, description: string, pkg: string | null, latestVersion = 1) => ({
  name,
  description,
  package: pkg,
  versions: latestVersion,
  latestVersion,
  updatedAt: '',
});

const LIB = [
  summary('sql-review', 'Review SQL migrations for locking and data loss', 'db-pack'),
  summary('sql-tuning', 'Tune slow SQL queries and indexes', 'db-pack'),
  summary('tea-brewing', 'Brew green tea at the right temperature', 'kitchen', 3),
  summary('unit-tests', 'Write unit tests for SQL helpers', 'dev-pack'),
];

function service(lib = LIB): CompareService {
  const skills = {
    list: () => lib,
    get: (name: string) => {
      const s = lib.find((x) => x.name === name);
      return s ? { name: s.name, version: { version: s.latestVersion } } : null;
    },
  } as unknown as SkillsRepo;
  return new CompareService(skills, {} as CompileService, {} as EngineService);
}

describe('CompareService.wrongSkillFor', () => {
  it('defaults to a dissimilar skill of another package, not the next name', () => {
    // the next name after sql-review is sql-tuning (same package, shares "sql"); the rule picks the tea skill
    expect(service().wrongSkillFor('sql-review')).toEqual({ name: 'tea-brewing', version: 3 });
    expect(service().wrongSkillFor('sql-tuning')).toEqual({ name: 'tea-brewing', version: 3 });
  });

  it('takes the skill asked for, and refuses the skill itself or an unknown one', () => {
    expect(service().wrongSkillFor('sql-review', 'sql-tuning')).toEqual({ name: 'sql-tuning', version: 1 });
    expect(() => service().wrongSkillFor('sql-review', 'sql-review')).toThrow(/is the skill being compared/);
    expect(() => service().wrongSkillFor('sql-review', 'nope')).toThrow(/no skill "nope"/);
  });

  it('is null in a library of one', () => {
    expect(service(LIB.slice(0, 1)).wrongSkillFor('sql-review')).toBeNull();
  });
});
