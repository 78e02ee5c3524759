// What a distilled lesson practises on (docs/distill.md "Distilled lessons"): the tasks of the
// trajectories it summarises, each asked as is (the teacher answers with the lesson in context) and again
// with the verifier's passing answer as a forced target. Four demos are four items: `variants` more
// forced copies of each redraw the numbers that the answer repeats from the question, so the adapter
// practises the rule on items it has not seen instead of memorising four (measured in docs/results.md,
// "Stage 3 on distilled lessons").
import type { PracticeQuestion } from '../../common/distill/practice';
import { seededRng } from '../engine/sampler';
import type { SuiteTask } from './suite';

/** Digit runs of the question that the answer repeats, longest first (so "12" never cuts "1234"). */
function sharedNumbers(question: string, answer: string): string[] {
  const runs = new Set(question.match(/\d+/g) ?? []);
  return [...runs].filter((r) => new RegExp(`(?<!\\d)${r}(?!\\d)`).test(answer)).sort((a, b) => b.length - a.length);
}

/** `text` with each whole digit run in `map` replaced by its value. */
function redraw(text: string, map: ReadonlyMap<string, string>): string {
  return text.replace(/\d+/g, (run) => map.get(run) ?? run);
}

export function lessonPractice(
  passed: readonly { task: SuiteTask }[],
  { variants = 0, seed = 0 }: { variants?: number; seed?: number } = {},
): PracticeQuestion[] {
  const rand = seededRng(seed);
  const digits = (like: string) =>
    [...like]
      .map((_, i) => String(i === 0 && like.length > 1 ? 1 + Math.floor(rand() * 9) : Math.floor(rand() * 10)))
      .join('');
  const out: PracticeQuestion[] = [];
  for (const { task } of passed) {
    if (task.messages.length !== 1 || task.messages[0]!.role !== 'user') continue; // no single question
    const question = task.messages[0]!.content;
    out.push({ question, source: 'trajectories' }, { question, source: 'trajectories', answer: task.reference });
    const shared = sharedNumbers(question, task.reference);
    if (!shared.length) continue;
    for (let v = 0; v < variants; v++) {
      const map = new Map(shared.map((r) => [r, digits(r)]));
      out.push({ question: redraw(question, map), source: 'trajectories', answer: redraw(task.reference, map) });
    }
  }
  return out;
}
