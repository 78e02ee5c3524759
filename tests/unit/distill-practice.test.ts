import { describe, expect, it } from 'vitest';
import { practiceQuestions } from '../../common/distill/practice';

const SKILL = `---
name: greet
description: say hello
---
# Greet

## When to use
When someone says hello.

## Examples
- User: say hi to Ann
- User: "greet the team"

\`\`\`
## not a heading inside a fence
\`\`\`

## Pitfalls
Never shout.
`;

describe('practiceQuestions', () => {
  it('takes tests, Examples questions and a cloze per section, each with its source', () => {
    const qs = practiceQuestions(SKILL, [{ prompt: 'greet Bob' }, { prompt: 'greet Bob' }]);
    expect(qs).toEqual([
      { question: 'greet Bob', source: 'test' },
      { question: 'say hi to Ann', source: 'example' },
      { question: 'greet the team', source: 'example' },
      { question: 'What does the skill say under "When to use"?', source: 'cloze' },
      { question: 'What does the skill say under "Examples"?', source: 'cloze' },
      { question: 'What does the skill say under "Pitfalls"?', source: 'cloze' },
    ]);
  });

  it('names the sources it tried when there are none', () => {
    expect(() => practiceQuestions('# Only a title\n')).toThrow(/tests \(none\).*Examples section.*sections/);
  });
});
