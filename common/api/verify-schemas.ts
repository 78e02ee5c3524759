// Verifier tests stored with a skill version, and verify.run: each test is a task
// (a prompt, or chat messages) and what the answer must meet (common/verify/expect.ts).
import { z } from 'zod';
import { AdapterId } from './adapter-schemas';
import { acceptingOldInstant } from './instant-name';
import { MAX_NEW_TOKENS } from './engine-schemas';
import { SkillName } from './skill-schemas';
import { TrajectoryMessage } from './trajectory-schemas';
import { ExpectSchema } from '../verify/expect';
import { passesAnything } from '../verify/meaningful';

export const VerifierTest = z
  .strictObject({
    /** Unique within the version's tests; names the test in results. */
    id: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\p{Cc}]+$/u, 'no control characters'),
    /** One user message … */
    prompt: z.string().min(1).max(100_000).optional(),
    /** … or the chat up to (not including) the answer, as SkillWorld's tasks.jsonl has it. */
    messages: z.array(TrajectoryMessage).min(1).max(100).optional(),
    expect: ExpectSchema,
    /** Tokens the answer may take (default: verify.run's maxTokens). */
    maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
  })
  .refine((t) => (t.prompt === undefined) !== (t.messages === undefined), {
    message: 'give exactly one of "prompt" or "messages"',
  });
export type VerifierTest = z.infer<typeof VerifierTest>;

export const TestSet = z
  .array(VerifierTest)
  .max(1000)
  .superRefine((tests, ctx) => {
    const seen = new Set<string>();
    tests.forEach((t, i) => {
      if (seen.has(t.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `test id "${t.id}" is used twice` });
      seen.add(t.id);
    });
  });

/** What verify.setTests stores: a test set with no regex that every answer matches ('', `.*`, `^`,
 *  `(?:)`; common/verify/meaningful.ts). Composed SkillWorld checkers are left as they are (a `not` of
 *  something never said is how a fixture marks a test that always passes). Tests stored before are read
 *  with TestSet, so an old one still loads and can be fixed. */
export const SavedTestSet = TestSet.superRefine((tests, ctx) => {
  tests.forEach((t, i) => {
    const why = t.expect.kind === 'regex' ? passesAnything(t.expect) : null;
    if (why) ctx.addIssue({ code: 'custom', path: [i, 'expect'], message: why });
  });
});

const VersionRef = z.object({ name: z.string(), version: z.number().int().positive() });

export const SkillTests = z.object({
  skill: VersionRef,
  /** The version the tests were stored with: this one, or the newest earlier version that has tests
   *  (a new version inherits them until it is given its own); null when none has. */
  from: z.number().int().positive().nullable(),
  tests: z.array(VerifierTest),
});
export type SkillTests = z.infer<typeof SkillTests>;

export const VERIFY_MODES = ['instant', 'in_context', 'none', 'adapter'] as const;
export const VerifyMode = z.enum(VERIFY_MODES);
export type VerifyMode = z.infer<typeof VerifyMode>;

export const VerifyRunInput = z
  .strictObject({
    name: SkillName,
    version: z.number().int().positive().optional(),
    /** instant (default; the old name `parametric` too): the version's instant adapter; in_context:
     *  its text as the system message; none: the base model; adapter: the adapter `adapter` names. */
    mode: acceptingOldInstant(VerifyMode).optional(),
    adapter: AdapterId.optional(),
    /** Default 64. */
    maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
    /** Only these tests (ids). */
    tests: z.array(z.string().min(1).max(200)).min(1).max(1000).optional(),
  })
  .refine((v) => (v.mode === 'adapter') === (v.adapter !== undefined), {
    message: 'mode "adapter" goes with "adapter" (an adapter id), and only it',
    path: ['adapter'],
  });
export type VerifyRunInput = z.infer<typeof VerifyRunInput>;

export const VerifyTestResult = z.object({
  id: z.string(),
  passed: z.boolean(),
  /** Passing samples over samples run (one greedy sample per test: 0 or 1). */
  passRate: z.number().min(0).max(1),
  answer: z.string(),
  reason: z.string().nullable(),
  finishReason: z.enum(['eos', 'stop', 'length', 'cancelled']),
  completionTokens: z.number().int().nonnegative(),
  /** in_context: the skill text was cut to fit the context. */
  truncated: z.boolean(),
  /** The adapter was distilled on this test (docs/distill.md "Practice"): its pass says little. */
  practised: z.boolean().optional(),
});
export type VerifyTestResult = z.infer<typeof VerifyTestResult>;

export const VerifyEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('compile'), chunk: z.number().int().nonnegative(), chunks: z.number().int().positive() }),
  z.object({ type: z.literal('start'), tests: z.number().int().nonnegative() }),
  z.object({ type: z.literal('result'), index: z.number().int().nonnegative(), id: z.string(), passed: z.boolean() }),
]);
export type VerifyEvent = z.infer<typeof VerifyEvent>;

export const VerifyRunResult = z.object({
  skill: VersionRef,
  testsFrom: z.number().int().positive().nullable(),
  mode: VerifyMode,
  /** The adapter id the tests ran with (instant, adapter), else null. */
  adapter: z.string().nullable(),
  n: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  /** passed / n; 0 when there are no tests. */
  passRate: z.number().min(0).max(1),
  results: z.array(VerifyTestResult),
  ms: z.number().nonnegative(),
  /** With a distilled adapter: the pass rate on the tests it did not practise on (null when it practised
   *  on every test: fewer than 4, none held out), and a note saying which the pass rate is on. */
  heldOut: z
    .object({
      n: z.number().int().nonnegative(),
      passed: z.number().int().nonnegative(),
      passRate: z.number().min(0).max(1).nullable(),
      note: z.string(),
    })
    .optional(),
});
export type VerifyRunResult = z.infer<typeof VerifyRunResult>;
