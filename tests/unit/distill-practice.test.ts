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

  it('asks the question before the arrow of a `"question" → answer` example', () => {
    const lesson =
      '# Lesson\n\n## Examples\n\n- "Could you note down contract 9624?" → `{"a": "contract 9624"}`\n- Log it -> done\n';
    expect(practiceQuestions(lesson).filter((q) => q.source === 'example')).toEqual([
      { question: 'Could you note down contract 9624?', source: 'example' },
      { question: 'Log it', source: 'example' },
    ]);
  });

  it('names the sources it tried when there are none', () => {
    expect(() => practiceQuestions('# Only a title\n')).toThrow(/tests \(none\).*Examples section.*sections/);
  });
});
