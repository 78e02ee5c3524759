// Skills for the compile/compare suites and the bundle-hyper fixture (training/scripts/make_fixture_hyper.py).
import { join } from 'node:path';
import { APP_ROOT } from '../../../main/paths';

export const HYPER_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-hyper');
export const TINY_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny');

export const skillMd = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n\n# ${name}\n\n## When to use\n\n${body}\n\n## Steps\n\n1. Read the input carefully.\n2. Apply the rule and check the result.\n`;

export const SKILLS = {
  'review-branch': skillMd(
    'review-branch',
    'Review a branch before you merge it.',
    'Use this before you merge a branch: check the tests and read each commit.',
  ),
  'sql-review': skillMd(
    'sql-review',
    'Review SQL migrations for locking and data loss.',
    'Use this before applying a schema migration to a production database.',
  ),
  // ~50 encoder chunks at token_budget 16: long enough to cancel in the middle.
  'long-notes': skillMd(
    'long-notes',
    'Write release notes from merged pull requests.',
    Array.from(
      { length: 60 },
      (_, i) => `- Step ${i}: summarise the change, name the pull request and the person who merged it.`,
    ).join('\n'),
  ),
};
