// import.example: the first-run path. A few SkillWorld skills (resources/examples/skillworld) are
// imported with their practice questions as tests, and their held-out tasks come back so the compare
// page can run one and mark each column with the task's checker (docs/guide.md, "Try an example").
import { z } from 'zod';
import { ExpectSchema } from '../verify/expect';

export const ExampleTask = z.object({
  id: z.string(),
  /** One user message: the compare page's prompt. */
  prompt: z.string(),
  expect: ExpectSchema,
  /** The generator's answer, which passes `expect`. */
  reference: z.string(),
});
export type ExampleTask = z.infer<typeof ExampleTask>;

export const ExampleSkill = z.object({
  name: z.string(),
  version: z.number().int().positive(),
  /** The rule the base model cannot guess, in a sentence. */
  rule: z.string(),
  /** How many tests the version has (the practice questions, unless the user had set their own). */
  tests: z.number().int().nonnegative(),
  /** Held-out tasks: never practised on by distillation. */
  tasks: z.array(ExampleTask),
});
export type ExampleSkill = z.infer<typeof ExampleSkill>;

export const ExampleSet = z.object({
  /** Skills new to the library (0 when the example was imported before). */
  imported: z.number().int().nonnegative(),
  /** The skill to open first. */
  open: z.string(),
  skills: z.array(ExampleSkill),
});
export type ExampleSet = z.infer<typeof ExampleSet>;
