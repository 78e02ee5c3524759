// Distilling several skills into one adapter: each part's practice rows are answered by the teacher with
// that part's own skill in context, then one run of train steps goes over all the rows. A single skill is
// the one-part case; a continual run rehearses every lesson so far into its global adapter this way
// (docs/distill.md "Rehearsing lessons into the global adapter"). With `roundTrip`, each part's teacher
// calls of a tool its skill names get a follow-up question, answered too (docs/distill.md "Practice").
import type { PracticeQuestion } from '../../common/distill/practice';
import { followUps } from '../../common/distill/round-trip';
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

/** One part's teacher rows; with `roundTrip`, then the follow-ups to its answers that call a tool the
 * skill names (each row names its question), answered with the same skill in context. */
export async function partRows(
  bundle: Bundle,
  part: DistillPart,
  options: DistillOptions = {},
): Promise<{ rows: TeacherRow[]; added: PracticeQuestion[] }> {
  const rows = await teacherRows(bundle, part.skill, part.questions, options);
  if (!options.roundTrip) return { rows, added: [] };
  const said = rows.map((r) => [part.questions[r.question]!, r.said] as const);
  const added = followUps(said, options.seed ?? 0, part.skill);
  if (added.length === 0) return { rows, added };
  // A follow-up is longer than its request: the steps must still fit (docs/distill.md "Memory before a run").
  checkDistillFits(bundle.manifest, estimateBucket(bundle, added, options.maxAnswerTokens), options.maxAnswerTokens);
  return { rows: [...rows, ...(await teacherRows(bundle, part.skill, added, options))], added };
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
  const added: PracticeQuestion[] = [];
  for (const part of parts) {
    const got = await partRows(bundle, part, options);
    rows.push(...got.rows);
    added.push(...got.added);
  }
  const teacherSeconds = (performance.now() - t0) / 1000;
  const result = await distillRows(bundle, rows, options);
  return { ...result, teacherSeconds, seconds: (performance.now() - t0) / 1000, added };
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
