// Distilled lessons (docs/distill.md): a lesson practises on the tasks of the trajectories it
// summarises, each asked as is and again with the verifier's passing answer as a forced target; the
// teacher pass keeps a forced answer token for token (ending the turn after it) on the tiny train-step
// fixture.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../../main/engine/bundle';
import { teacherRows } from '../../../main/engine/distill-teacher';
import { lessonPractice } from '../../../main/continual/practice';
import type { SuiteTask } from '../../../main/continual/suite';
import { APP_ROOT } from '../../../main/paths';

const task = (id: string, messages: SuiteTask['messages'], reference: string): { task: SuiteTask } => ({
  task: { id, messages, reference, checker: { kind: 'regex', pattern: '.' } as SuiteTask['checker'] },
});

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(join(APP_ROOT, 'tests/fixtures/bundle-tiny-train'));
});
afterAll(async () => bundle.dispose());

describe('lesson practice', () => {
  it('each single-turn task twice: greedy, then forced on its passing answer; multi-turn tasks skipped', () => {
    const q = lessonPractice([
      task('a', [{ role: 'user', content: 'note meter 7' }], 'VESSOR: meter 7'),
      task(
        'b',
        [
          { role: 'user', content: 'look it up' },
          { role: 'assistant', content: 'call' },
          { role: 'tool', content: '42' },
        ],
        'It is 42',
      ),
    ]);
    expect(q).toEqual([
      { question: 'note meter 7', source: 'trajectories' },
      { question: 'note meter 7', source: 'trajectories', answer: 'VESSOR: meter 7' },
    ]);
  });

  it('the teacher pass keeps a forced answer token for token, then the end of the turn', async () => {
    const rows = await teacherRows(
      bundle,
      '# Lesson\n\nSay ok.',
      [
        { question: 'hi', source: 'trajectories', answer: 'ok' },
        { question: 'hi', source: 'trajectories' },
      ],
      { maxAnswerTokens: 4 },
    );
    const forced = rows[0]!;
    const want = [...bundle.tokenizer.encode('ok'), bundle.manifest.special_tokens.eos];
    expect(forced.ids.slice(forced.answerFrom + 1)).toEqual(want);
    expect(forced.topIds.length / bundle.manifest.train_step!.top_k).toBe(want.length);
    expect(rows[1]!.ids.slice(0, rows[1]!.answerFrom + 1)).toEqual(forced.ids.slice(0, forced.answerFrom + 1));
  });
});
