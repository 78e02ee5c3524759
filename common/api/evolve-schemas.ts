// Evolve: the text-space loop. A generator proposes revised SKILL.md candidates, the
// verifier scores each with the skill's tests in context and compiled, and the best becomes a new
// skill version (provenance `evolve`). Runs and candidates are stored; a run resumes by its id.
import { z } from 'zod';
import { MAX_NEW_TOKENS, Seed } from './engine-schemas';
import { acceptingOldInstant } from './instant-name';
import { SkillName, VersionMeta } from './skill-schemas';

export const EVOLVE_GENERATORS = ['offline', 'llm'] as const;
export const EvolveGeneratorKind = z.enum(EVOLVE_GENERATORS);
export type EvolveGeneratorKind = z.infer<typeof EvolveGeneratorKind>;

/** How a candidate is scored: its text in context, and its instant adapter. */
export const EVOLVE_MODES = ['in_context', 'instant'] as const;
export const EvolveMode = z.enum(EVOLVE_MODES);
export type EvolveMode = z.infer<typeof EvolveMode>;

export const EvolveRunId = z.string().regex(/^[0-9a-f]{12}$/, 'an evolve run id: 12 lowercase hex digits');

export const MAX_EVOLVE_ITERATIONS = 100;
export const MAX_EVOLVE_CANDIDATES = 16;
export const DEFAULT_EVOLVE_CANDIDATES = 4;
export const DEFAULT_EVOLVE_TOKENS = 64;

export const EvolveRunInput = z.strictObject({
  name: SkillName,
  /** The version to start from (default: the latest). */
  version: z.number().int().positive().optional(),
  iterations: z.number().int().min(1).max(MAX_EVOLVE_ITERATIONS),
  /** Candidates per iteration (default 4). */
  candidates: z.number().int().min(1).max(MAX_EVOLVE_CANDIDATES).optional(),
  /** Default 0. The offline generator's choices follow it. */
  seed: Seed.optional(),
  /** Default offline; llm needs settings llmBaseUrl and llmModel. */
  generator: EvolveGeneratorKind.optional(),
  /** Default: in_context and instant when the bundle has a hypernetwork, else in_context (the old
   *  name `parametric` reads as instant). */
  modes: z.array(acceptingOldInstant(EvolveMode)).min(1).max(2).optional(),
  /** Tokens per test answer (default 64). */
  maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
  /** Whether the best candidate, when it beats the baseline, becomes a new version at the end
   *  (default true); false leaves accepting to evolve.accept. */
  accept: z.boolean().optional(),
});
export type EvolveRunInput = z.infer<typeof EvolveRunInput>;

const ModeScore = z.object({
  passed: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  passRate: z.number().min(0).max(1),
  failed: z.array(z.object({ id: z.string(), reason: z.string().nullable() })),
});

export const EvolveCandidate = z.object({
  /** Unique within the run (its row id). */
  id: z.number().int().positive(),
  /** 0: the baseline (the starting version's text). */
  iteration: z.number().int().nonnegative(),
  index: z.number().int().nonnegative(),
  /** The candidate it was made from (the best so far when its iteration began). */
  parent: z.number().int().positive().nullable(),
  /** `baseline`, an operator chain (`move_rule_up+checklist`), or `llm`. */
  operator: z.string(),
  note: z.string(),
  sha256: z.string(),
  /** Unified diff against the parent ('' for the baseline). */
  diff: z.string(),
  /** Mean pass rate over the run's modes; null until scored. */
  score: z.number().min(0).max(1).nullable(),
  scores: z.object({ in_context: ModeScore.optional(), instant: ModeScore.optional() }).nullable(),
  status: z.enum(['proposed', 'accepted', 'rejected']),
  /** The skill version it became (accepted only). */
  version: z.number().int().positive().nullable(),
});
export type EvolveCandidate = z.infer<typeof EvolveCandidate>;

export const EvolveIteration = z.object({
  iteration: z.number().int().positive(),
  candidateScores: z.array(z.number().min(0).max(1)),
  /** The best score so far, the baseline's included. */
  bestScore: z.number().min(0).max(1),
});

export const EvolveRunSummary = z.object({
  id: EvolveRunId,
  skill: z.object({ name: z.string(), version: z.number().int().positive() }),
  generator: EvolveGeneratorKind,
  iterations: z.number().int().positive(),
  candidates: z.number().int().positive(),
  seed: z.number().int(),
  modes: z.array(EvolveMode),
  status: z.enum(['running', 'cancelled', 'failed', 'done']),
  error: z.string().nullable(),
  baselineScore: z.number().nullable(),
  /** Iterations whose candidates are all scored. */
  iterationsDone: z.number().int().nonnegative(),
  best: z.object({ candidate: z.number().int().positive(), score: z.number() }).nullable(),
  /** The version the run made when it ended (null: none beat the baseline, or accept was off). */
  resultVersion: z.number().int().positive().nullable(),
  /** The best version compiled with the tier the skill uses (distilled when the starting version has a
   *  distilled adapter on this bundle): its adapter and, distilled, its pass rate on the skill's tests. */
  bestCompiled: z
    .object({
      tier: z.enum(['instant', 'distilled']),
      adapter: z.string().nullable(),
      accuracy: z.number().min(0).max(1).nullable(),
    })
    .nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type EvolveRunSummary = z.infer<typeof EvolveRunSummary>;

export const EvolveRunDetail = EvolveRunSummary.extend({
  iterationScores: z.array(EvolveIteration),
  candidates: z.array(EvolveCandidate.extend({ content: z.string() })),
});
export type EvolveRunDetail = z.infer<typeof EvolveRunDetail>;

export const EvolveResult = z.object({
  run: EvolveRunSummary,
  baselineScore: z.number().min(0).max(1),
  iterations: z.array(EvolveIteration),
  /** The version that holds the best text (the starting one when nothing beat it) and its score. */
  best: z.object({ version: z.number().int().positive(), score: z.number().min(0).max(1) }),
  /** The best version's compiled adapter (null: the bundle has no hypernetwork). */
  adapter: z.string().nullable(),
  /** The tier it was compiled with, and for distilled its adapter's pass rate on the skill's tests. */
  tier: z.enum(['instant', 'distilled']),
  accuracy: z.number().min(0).max(1).nullable(),
});
export type EvolveResult = z.infer<typeof EvolveResult>;

export const EvolveEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('run'),
    run: EvolveRunId,
    resumed: z.boolean(),
    iterations: z.number().int().positive(),
    candidates: z.number().int().positive(),
  }),
  z.object({ type: z.literal('proposed'), iteration: z.number().int().positive(), candidates: z.number().int() }),
  z.object({
    type: z.literal('scored'),
    iteration: z.number().int().nonnegative(),
    index: z.number().int().nonnegative(),
    candidate: z.number().int().positive(),
    operator: z.string(),
    score: z.number().min(0).max(1),
  }),
  z.object({
    type: z.literal('iteration'),
    iteration: z.number().int().positive(),
    candidateScores: z.array(z.number()),
    bestScore: z.number(),
  }),
  z.object({ type: z.literal('accepted'), version: z.number().int().positive(), score: z.number() }),
]);
export type EvolveEvent = z.infer<typeof EvolveEvent>;

export const EvolveCandidateRef = z.strictObject({ run: EvolveRunId, candidate: z.number().int().positive() });

export const EvolveAccepted = z.object({
  version: VersionMeta,
  /** The new version's adapter, compiled with the loaded bundle (null: it has no hypernetwork). */
  adapter: z.string().nullable(),
});
export type EvolveAccepted = z.infer<typeof EvolveAccepted>;
