// A skill and tests for the evolve suites: the tests' words touch the rule section only, and on the
// random bundle-hyper model "always" passes and "never" fails whatever it answers (every text: 0.5).
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { skillMd } from '../compile/fixture';

/** A skill with a rule section last, filler the tests never touch and a repeated rule. */
export const evolveSkill = (name: string) =>
  skillMd(name, 'Review SQL migrations for locking.', 'Use this before a schema migration runs on production.') +
  '\n## Background\n\nArchive folders keep older material by quarter.\n\n' +
  '## Locking\n\n- Check whether the migration takes a table lock.\n- Check whether the migration takes a table lock.\n- Name the lock.\n';

export const EVOLVE_TESTS: VerifierTest[] = [
  {
    id: 'never',
    prompt: 'Review this migration.',
    expect: { kind: 'exact', value: 'nothing a random model says 4711' },
  },
  {
    id: 'always',
    prompt: 'Is a lock needed?',
    expect: { kind: 'not', of: { kind: 'contains', value: 'zq-never-zq' } },
  },
];
