// Distilling several skills into one adapter: each part's practice rows are answered by the teacher with
// that part's own skill in context, then one run of train steps goes over all the rows. A single skill is
// the one-part case; a continual run rehearses every lesson so far into its global adapter this way
// (docs/distill.md "Rehearsing lessons into the global adapter").
import type { PracticeQuestion } from '../../common/distill/practice';
import type { Bundle } from './bundle';
import { recipeOf } from './distill-recipe';
import { checkDistillFits } from './distill-memory';
import { distillRows, type DistillOptions, type DistillResult } from './distill';
import { estimateBucket } from './distill-batch';
import { teacherRows, type TeacherRow } from './distill-teacher';
import { trainStepEntry } from './train-step';

export interface DistillPart {
  readonly skill: string;
  readonly questions: readonly PracticeQuestion[];
}

/** Teacher pass per part, then K steps over every part's rows together. */
export async function distillParts(
  bundle: Bundle,
  parts: readonly DistillPart[],
  options: DistillOptions = {},
): Promise<DistillResult> {
  trainStepEntry(bundle.manifest);
  // Refused before the teacher pass when the steps cannot fit the free memory (docs/distill.md).
  checkDistillFits(
    bundle.manifest,
    estimateBucket(
      bundle,
      parts.flatMap((p) => p.questions),
      options.maxAnswerTokens,
    ),
    options.maxAnswerTokens,
  );
  const t0 = performance.now();
  const steps = options.steps ?? recipeOf(bundle.manifest).steps;
  options.onProgress?.({ phase: 'teacher', step: 0, steps, loss: null, secondsLeft: null });
  const rows: TeacherRow[] = [];
  for (const part of parts) rows.push(...(await teacherRows(bundle, part.skill, part.questions, options)));
  const teacherSeconds = (performance.now() - t0) / 1000;
  const result = await distillRows(bundle, rows, options);
  return { ...result, teacherSeconds, seconds: (performance.now() - t0) / 1000 };
}

/** One skill: teacher pass, then K steps. */
export function distillSkill(
  bundle: Bundle,
  skill: string,
  questions: readonly PracticeQuestion[],
  options: DistillOptions = {},
): Promise<DistillResult> {
  return distillParts(bundle, [{ skill, questions }], options);
}
