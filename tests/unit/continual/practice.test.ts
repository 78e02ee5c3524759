import { describe, expect, it } from 'vitest';
import { lessonPractice } from '../../../main/continual/practice';
import type { SuiteTask } from '../../../main/continual/suite';

const task = (content: string, reference: string): { task: SuiteTask } => ({
  task: { id: 't', messages: [{ role: 'user', content }], reference, checker: { kind: 'regex', pattern: '.' } },
});

describe('lesson practice variants', () => {
  it('redraws the numbers the answer repeats from the question, in both, keeping their lengths', () => {
    const q = lessonPractice([task('File contract 9561 in register 12.', '{"id": "contract 9561"}')], {
      variants: 3,
      seed: 7,
    });
    expect(q.slice(0, 2)).toEqual([
      { question: 'File contract 9561 in register 12.', source: 'trajectories' },
      { question: 'File contract 9561 in register 12.', source: 'trajectories', answer: '{"id": "contract 9561"}' },
    ]);
    const variants = q.slice(2);
    expect(variants).toHaveLength(3);
    for (const v of variants) {
      const n = /contract (\d+)/.exec(v.question)![1]!;
      expect(n).toMatch(/^[1-9]\d{3}$/);
      expect(v.question).toBe(`File contract ${n} in register 12.`); // 12 is not in the answer: kept
      expect(v.answer).toBe(`{"id": "contract ${n}"}`);
    }
    expect(new Set(variants.map((v) => v.question)).size).toBeGreaterThan(1);
    // The same seed draws the same variants.
    expect(
      lessonPractice([task('File contract 9561 in register 12.', '{"id": "contract 9561"}')], { variants: 3, seed: 7 }),
    ).toEqual(q);
  });

  it('adds no variant when the answer repeats no number of the question, and none by default', () => {
    expect(lessonPractice([task('Say hello to Ann.', 'HELLO Ann')], { variants: 3 })).toHaveLength(2);
    expect(lessonPractice([task('Log meter 7.', 'VESSOR: meter 7')])).toHaveLength(2);
  });
});
