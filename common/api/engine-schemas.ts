// DTOs for the engine: bundle info, generation requests, streamed tokens and results.
import { z } from 'zod';
import { AdapterId } from './adapter-schemas';
import { acceptingOldInstant } from './instant-name';
import { SkillName } from './skill-schemas';
import { ExpectSchema } from '../verify/expect';

export const ChatMessage = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().max(200_000),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A seed for sampling or for a generator's choices. */
export const Seed = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

/** Sampling's fields; a trajectory's JSONL line keeps them under snake_case names. */
export const samplingFields = {
  temperature: z.number().min(0).max(5).optional(), // 0 = greedy
  topK: z.number().int().min(0).max(10_000).optional(),
  topP: z.number().gt(0).max(1).optional(),
  repetitionPenalty: z.number().min(0.5).max(3).optional(),
  seed: Seed.optional(),
};

export const Sampling = z.object(samplingFields).strict();
export type Sampling = z.infer<typeof Sampling>;

export const MAX_NEW_TOKENS = 4096;

/**
 * The adapter a generation runs with: a stored adapter of the library (an id prefix), a skill version
 * compiled with the current bundle (absent version = the latest; compiled on first use and cached), or
 * the current bundle's global adapter (its newest version).
 */
export const AdapterChoice = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('library'), id: AdapterId }).strict(),
  z.object({ kind: z.literal('skill'), name: SkillName, version: z.number().int().positive().optional() }).strict(),
  z.object({ kind: z.literal('global') }).strict(),
]);
export type AdapterChoice = z.infer<typeof AdapterChoice>;

export const GenerateInput = z
  .object({
    /** Chat messages, rendered with the bundle's chat template; or a raw prompt. */
    messages: z.array(ChatMessage).min(1).max(500).optional(),
    prompt: z.string().min(1).max(400_000).optional(),
    maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
    stop: z.array(z.string().min(1).max(200)).max(8).optional(),
    sampling: Sampling.optional(),
    /** Absent: the base model alone. */
    adapter: AdapterChoice.optional(),
  })
  .strict()
  .refine((v) => (v.messages === undefined) !== (v.prompt === undefined), {
    message: 'give exactly one of "messages" or "prompt"',
  });
export type GenerateInput = z.infer<typeof GenerateInput>;

export const TokenDelta = z.object({ tokenId: z.number().int(), text: z.string() });
export type TokenDelta = z.infer<typeof TokenDelta>;

export const GenerateResult = z.object({
  text: z.string(),
  finishReason: z.enum(['eos', 'stop', 'length', 'cancelled']),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  ttftMs: z.number().nonnegative(),
  ms: z.number().nonnegative(),
  tokensPerSecond: z.number().nonnegative(),
  /** The id of the adapter the request's `adapter` resolved to (null: none asked for). */
  adapter: AdapterId.nullable().optional(),
});
export type GenerateResult = z.infer<typeof GenerateResult>;

/** The base model's shape, as an engine or a model card reports it. */
export const ModelArchitecture = z.object({
  family: z.string(),
  hidden: z.number().int(),
  layers: z.number().int(),
  heads: z.number().int(),
  kvHeads: z.number().int(),
  vocab: z.number().int(),
  maxPositions: z.number().int(),
});
export type ModelArchitecture = z.infer<typeof ModelArchitecture>;

export const EngineInfo = z.object({
  loaded: z.boolean(),
  dir: z.string().nullable(),
  id: z.string().nullable(),
  format: z.string().nullable(),
  architecture: ModelArchitecture.nullable(),
  loraTargets: z.array(z.string()),
  loadMs: z.number().nullable(),
  hasHypernet: z.boolean(),
  trainingCard: z.unknown().optional(),
  /** Execution provider asked for (--provider or the executionProvider setting), the one the bundle
   *  runs on, and why they differ (null: they do not). */
  provider: z
    .object({
      requested: z.enum(['cpu', 'webgpu', 'cuda']),
      used: z.enum(['cpu', 'webgpu', 'cuda']),
      fallback: z.string().nullable(),
    })
    .optional(),
});
export type EngineInfo = z.infer<typeof EngineInfo>;

/** Side-by-side conditions of compare.run. `instant` is the hypernetwork's adapter (`pskills eval`
 *  calls it `parametric`), `distilled` the version's newest distilled one (docs/distill.md). */
/** compare.run's columns, in the order they are shown. */
export const COMPARE_CONDITIONS = ['none', 'in_context', 'instant', 'distilled', 'wrong_skill'] as const;
export const CompareCondition = z.enum(COMPARE_CONDITIONS);
export type CompareCondition = z.infer<typeof CompareCondition>;

const SkillVersion = z.object({ name: z.string(), version: z.number().int().positive() });

export const CompareRunInput = z
  .object({
    name: SkillName,
    version: z.number().int().positive().optional(),
    /** The user message every column answers. */
    prompt: z.string().min(1).max(100_000),
    maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
    /** Default: none, in_context, instant, distilled (when the version has a distilled adapter on the
     *  current bundle), wrong_skill, in this order. The old name `parametric` reads as instant. */
    conditions: z.array(acceptingOldInstant(CompareCondition)).min(1).max(5).optional(),
    /** Default greedy (temperature 0), so the columns differ only by their condition. */
    sampling: Sampling.optional(),
    /** The skill whose adapter the wrong_skill column uses; default: a dissimilar one (common/compare/wrong-skill.ts). */
    wrongSkill: SkillName.optional(),
    /** The prompt's checker (a test of the skill, an example's held-out task): each column's kept
     *  trajectory carries its verdict, as the page's ✓/✗ show it. */
    check: z
      .object({ expect: ExpectSchema, test: z.string().min(1).max(200).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .refine((v) => !v.conditions || new Set(v.conditions).size === v.conditions.length, {
    message: 'a condition is listed twice',
    path: ['conditions'],
  });
export type CompareRunInput = z.infer<typeof CompareRunInput>;

export const CompareColumnSetup = z.object({
  condition: CompareCondition,
  promptTokens: z.number().int().positive(),
  /** The adapter this column runs with (instant, distilled, wrong_skill), else null. */
  adapter: z.string().nullable(),
  /** The skill in its context or weights (null for none). */
  skill: SkillVersion.nullable(),
  /** in_context: the skill text was cut to fit the context. */
  truncated: z.boolean(),
});
export type CompareColumnSetup = z.infer<typeof CompareColumnSetup>;

export const CompareEvent = z.discriminatedUnion('type', [
  /** compiling the skill (or the wrong skill) before generation starts; cached adapters skip this */
  z.object({
    type: z.literal('compile'),
    skill: SkillVersion,
    chunk: z.number().int().nonnegative(),
    chunks: z.number().int().positive(),
  }),
  /** the columns, once, before the first token */
  z.object({ type: z.literal('start'), columns: z.array(CompareColumnSetup) }),
  /** a token of one column (index into `columns`) */
  z.object({
    type: z.literal('token'),
    column: z.number().int().nonnegative(),
    condition: CompareCondition,
    tokenId: z.number().int(),
    text: z.string(),
  }),
]);
export type CompareEvent = z.infer<typeof CompareEvent>;

export const CompareColumn = CompareColumnSetup.extend({
  text: z.string(),
  completionTokens: z.number().int().nonnegative(),
  /** From the start of the batch to this column's first token (one batch: the prefill is shared). */
  ttftMs: z.number().nonnegative(),
  /** This column's decode rate after its first token. */
  tokensPerSecond: z.number().nonnegative(),
  finishReason: z.enum(['eos', 'stop', 'length', 'cancelled']),
});
export type CompareColumn = z.infer<typeof CompareColumn>;

export const CompareRunResult = z.object({
  skill: SkillVersion,
  /** The skill the wrong_skill column's adapter was compiled from; null when the column is absent. */
  wrongSkill: SkillVersion.nullable(),
  columns: z.array(CompareColumn),
  /** Conditions asked for but not run, and why (e.g. wrong_skill in a library of one skill). */
  skipped: z.array(z.object({ condition: CompareCondition, reason: z.string() })),
  ms: z.number().nonnegative(),
});
export type CompareRunResult = z.infer<typeof CompareRunResult>;
