// Continual learning into the global adapter: `continual.run` plays SkillWorld
// episodes; each verified episode is summarised into a lesson (a short SKILL.md), compiled and
// absorbed by the mode; after each episode the held-out tasks of every lesson so far are measured.
import { z } from 'zod';
import { MAX_NEW_TOKENS } from './engine-schemas';
import { AbsoluteDir } from './paths';

/** merge: EMA into the global adapter (cat then svd to the rank budget); cat: the exact mean of the
 *  lessons (rank grows); linear: the factor-wise mean (the paper's baseline); independent: the newest
 *  lesson's adapter alone; in_context: every lesson so far as the system message, no adapter. */
export const CONTINUAL_MODES = ['merge', 'cat', 'linear', 'independent', 'in_context'] as const;
export const ContinualMode = z.enum(CONTINUAL_MODES);
export type ContinualMode = z.infer<typeof ContinualMode>;

export const ContinualRunInput = z.strictObject({
  suite: z.literal('skillworld'),
  episodes: z.number().int().min(1).max(1000),
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  mode: ContinualMode,
  /** merge: the newest lesson's weight (default 0.1). */
  beta: z.number().gt(0).max(1).optional(),
  /** merge: the global adapter's rank after each step (default 16). */
  rankBudget: z.number().int().min(1).max(4096).optional(),
  /** Tasks per episode whose verified trajectories make its lesson (default 4). */
  demos: z.number().int().min(1).max(100).optional(),
  /** Held-out tasks per lesson, measured after every later episode (default 4). */
  tasks: z.number().int().min(1).max(100).optional(),
  /** Tokens per answer (default 48: the longest SkillWorld reference is about 35). */
  maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
  /** A SkillWorld folder (tasks.jsonl); default the committed resources/skillworld/continual. */
  world: AbsoluteDir.optional(),
  /** template: the offline summariser; llm: the configured endpoint (error when none is).
   *  Default: llm when an endpoint is configured, else template. */
  summariser: z.enum(['template', 'llm']).optional(),
  /** How each lesson is compiled: distilled (default; the bundle's train-step graph, practising on the
   *  tasks of the trajectories it summarises, docs/distill.md) or instant (the hypernetwork, one pass). */
  tier: z.enum(['distilled', 'instant']).optional(),
  /** distilled: train steps per lesson (default 10). */
  steps: z.number().int().min(1).max(1000).optional(),
  /** merge, distilled: after each EMA step, this many train steps rehearse every lesson so far into the
   *  global adapter, each lesson's practice answered with that lesson in context (default 40; 0: EMA only;
   *  docs/distill.md "Rehearsing lessons into the global adapter"). */
  rehearse: z.number().int().min(0).max(1000).optional(),
  /** distilled: forced practice copies per demo with the numbers it repeats from its question redrawn
   *  (default 3). */
  variants: z.number().int().min(0).max(100).optional(),
});
export type ContinualRunInput = z.infer<typeof ContinualRunInput>;

export const ContinualRunId = z.string().regex(/^[0-9a-f]{12}$/, 'a continual run id: 12 lowercase hex digits');
export const ContinualResumeInput = z.strictObject({ run: ContinualRunId });

export const ContinualEvent = z.discriminatedUnion('type', [
  /** First: the run's id (stored; `continual.resume` goes on with it) and the episodes already done. */
  z.object({
    type: z.literal('run'),
    run: ContinualRunId,
    resumed: z.boolean(),
    done: z.number().int().nonnegative(),
  }),
  z.object({
    type: z.literal('episode'),
    episode: z.number().int().positive(),
    episodes: z.number().int().positive(),
    world: z.string(),
  }),
  z.object({
    type: z.literal('lesson'),
    episode: z.number().int().positive(),
    skill: z.object({ name: z.string(), version: z.number().int().positive() }),
    adapter: z.string(),
    summariser: z.string(),
  }),
  z.object({ type: z.literal('measure'), episode: z.number().int().positive(), tasks: z.number().int() }),
  z.object({
    type: z.literal('measured'),
    episode: z.number().int().positive(),
    passRate: z.number().min(0).max(1),
    globalVersion: z.number().int().positive().nullable(),
  }),
  /** Something went wrong without stopping the run (e.g. the LLM summariser failed: template used). */
  z.object({ type: z.literal('warning'), episode: z.number().int().positive(), message: z.string() }),
]);
export type ContinualEvent = z.infer<typeof ContinualEvent>;

export const ContinualEpisode = z.object({
  episode: z.number().int().positive(),
  world: z.string(),
  /** The lesson version this episode added; null when no demo passed the verifier. */
  lesson: z.object({ name: z.string(), version: z.number().int().positive() }).nullable(),
  /** passed / n over the held-out tasks of every lesson so far. */
  passRate: z.number().min(0).max(1),
  passed: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  /** The global adapter version measured (merge, cat, linear); null for independent and in_context. */
  globalVersion: z.number().int().positive().nullable(),
  /** The adapter the tasks ran with (short id), null for in_context. */
  adapter: z.string().nullable(),
  /** The held-out tasks that passed, by task id (paired comparisons across modes). */
  passedTasks: z.array(z.string()),
  /** in_context: tasks whose lessons text was cut to fit the context. */
  truncated: z.number().int().nonnegative(),
  ms: z.number().nonnegative(),
});
export type ContinualEpisode = z.infer<typeof ContinualEpisode>;

export const ContinualRunResult = z.object({
  run: z.string(),
  mode: ContinualMode,
  suite: z.literal('skillworld'),
  seed: z.number().int(),
  bundle: z.object({ id: z.string(), sha256: z.string() }),
  settings: z.object({
    beta: z.number(),
    rankBudget: z.number().int(),
    demos: z.number().int(),
    tasks: z.number().int(),
    maxTokens: z.number().int(),
    /** How the lessons were compiled, and the distillation steps per lesson (null for instant). */
    tier: z.enum(['distilled', 'instant']),
    steps: z.number().int().nullable(),
    /** merge: rehearsal steps after each EMA step (0: none). */
    rehearse: z.number().int().nonnegative().default(0),
    variants: z.number().int().nonnegative().default(0),
    summariser: z.string(),
  }),
  episodes: z.array(ContinualEpisode),
  /** The last episode's pass rate. */
  finalPassRate: z.number().min(0).max(1),
  ms: z.number().nonnegative(),
});
export type ContinualRunResult = z.infer<typeof ContinualRunResult>;

/** Where a run stands. interrupted: stored as running, but no process here is running it (killed or
 *  closed mid-run); Resume goes on with it. */
export const ContinualRunStatus = z.enum(['running', 'interrupted', 'cancelled', 'failed', 'done']);
export type ContinualRunStatus = z.infer<typeof ContinualRunStatus>;

export const ContinualPoint = z.object({
  episode: z.number().int().positive(),
  passRate: z.number().min(0).max(1),
  globalVersion: z.number().int().positive().nullable(),
});

/** One run workspace as the Continual page lists it (docs/store.md "Run workspaces"). */
export const ContinualRunSummary = z.object({
  run: ContinualRunId,
  mode: ContinualMode.nullable(),
  seed: z.number().int().nullable(),
  episodes: z.number().int().nonnegative(),
  tier: z.enum(['distilled', 'instant']),
  status: ContinualRunStatus,
  /** Why it failed or stopped, in words; null when it did not. */
  error: z.string().nullable(),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
  points: z.array(ContinualPoint),
  finalPassRate: z.number().min(0).max(1).nullable(),
});
export type ContinualRunSummary = z.infer<typeof ContinualRunSummary>;

export const ContinualLesson = z.object({
  episode: z.number().int().positive(),
  world: z.string(),
  name: z.string(),
  version: z.number().int().positive(),
  text: z.string(),
  /** The lesson's adapter in the workspace (short id) and its tier; null when not compiled yet. */
  adapter: z.string().nullable(),
  tier: z.enum(['distilled', 'instant']).nullable(),
});
export type ContinualLesson = z.infer<typeof ContinualLesson>;

export const ContinualRunDetail = ContinualRunSummary.extend({
  lessons: z.array(ContinualLesson),
  /** The workspace's global-adapter versions, newest last. */
  globals: z.array(z.object({ version: z.number().int().positive(), adapter: z.string(), episode: z.number().int() })),
  /** The workspace folder (under the data folder's runs/). */
  dir: z.string(),
});
export type ContinualRunDetail = z.infer<typeof ContinualRunDetail>;

/** Adopt a lesson (by episode) or the run's global adapter (at an episode; default its newest). */
export const ContinualAdoptInput = z.strictObject({
  run: ContinualRunId,
  what: z.enum(['lesson', 'global']),
  episode: z.number().int().positive().optional(),
  /** lesson: the Library skill's name (default the lesson's); global: the adopted item's name
   *  (default global-<run>). A lesson name that exists is refused: nothing is overwritten. */
  name: z
    .string()
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'name: lowercase letters, digits and single hyphens')
    .max(64)
    .optional(),
});
export type ContinualAdoptInput = z.infer<typeof ContinualAdoptInput>;

export const ContinualAdoption = z.object({
  name: z.string(),
  version: z.number().int().positive(),
  kind: z.enum(['lesson', 'global']),
  run: z.string(),
  episode: z.number().int().positive(),
  /** The adapter in the Library (short id). */
  adapter: z.string(),
  /** lesson: the Library skill version made. */
  skill: z.object({ name: z.string(), version: z.number().int().positive() }).nullable(),
  /** What it was in the workspace: lesson name@version, or the global version. */
  from: z.string(),
  createdAt: z.string(),
});
export type ContinualAdoption = z.infer<typeof ContinualAdoption>;
