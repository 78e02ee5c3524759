// A skill the tiny train-step bundle can practise on (tests/fixtures/bundle-tiny-train): one rule and two
// Examples, for the merge-with-rehearsal tests over the API and the CLI.
import { join } from 'node:path';
import { APP_ROOT } from '../../../main/paths';

export const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');

export const greetSkill = (name: string, word: string) => `---
name: ${name}
description: Answer a greeting with the word ${word}.
---
# ${name}

Always answer with the word ${word}.

## Examples
- User: hi
- User: yo
`;
