// Trajectories: what compare, the Playground, the OpenAI endpoint, evaluations and the
// self-evolving loop ran, kept with the skill version, adapter, bundle and sampling they ran with,
// the verifier's outcome and the user's rating. The API shapes (camelCase) and the JSONL line of
// export/import (snake_case, read by the Python stage-2 trainer), and the studio settings.
import { z } from 'zod';
import { Sha256 } from './adapter-schemas';
import { acceptingOldInstant } from './instant-name';
import { MAX_NEW_TOKENS, Sampling, samplingFields } from './engine-schemas';
import { AbsolutePath } from './paths';
import { SkillName } from './skill-schemas';

export const TRAJECTORY_SOURCES = ['compare', 'playground', 'openai', 'eval', 'evolve', 'synth'] as const;
export const TrajectorySource = z.enum(TRAJECTORY_SOURCES);
export type TrajectorySource = z.infer<typeof TrajectorySource>;

/** How the skill reached the model: not at all, its text as the system message, its instant
 *  adapter, another skill's adapter (compare's control), or an adapter named by id. */
export const TRAJECTORY_CONDITIONS = ['none', 'in_context', 'instant', 'wrong_skill', 'adapter'] as const;
export const TrajectoryCondition = z.enum(TRAJECTORY_CONDITIONS);
export type TrajectoryCondition = z.infer<typeof TrajectoryCondition>;
/** On input (trajectories.add, an imported line) the old `parametric` reads as `instant`. */
const TrajectoryConditionInput = acceptingOldInstant(TrajectoryCondition);

/** A chat turn; `tool` for SkillWorld's multi-turn tasks (a tool result). */
export const TrajectoryMessage = z.strictObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().max(1_000_000),
});
export type TrajectoryMessage = z.infer<typeof TrajectoryMessage>;

/** The uid a trajectory keeps across libraries (export/import): 32 lowercase hex digits. */
export const TrajectoryUid = z.string().regex(/^[0-9a-f]{32}$/, '32 lowercase hex digits');
/** A uid or a unique prefix of at least 6 hex digits. */
export const TrajectoryRef = z.string().regex(/^[0-9a-f]{6,32}$/, 'a trajectory id: 6 to 32 lowercase hex digits');

export const Verdict = z.strictObject({
  passed: z.boolean(),
  /** The verifier test that judged it (its id in the skill version's tests). */
  test: z.string().max(200).optional(),
  /** Why it failed, in a line. */
  reason: z.string().max(2000).optional(),
});
export type Verdict = z.infer<typeof Verdict>;

export const RatingValue = z.enum(['up', 'down']);
export const Rating = z.strictObject({ value: RatingValue, note: z.string().max(2000).nullable(), at: z.string() });
export type Rating = z.infer<typeof Rating>;

/** Sampling as it ran: the engine's settings plus the token limit. */
export const TrajectorySampling = Sampling.extend({
  maxTokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
}).strict();
export type TrajectorySampling = z.infer<typeof TrajectorySampling>;

/** Free JSON about the run (finish reason, token counts, the endpoint's metadata, …). */
export const Details = z.custom<Record<string, unknown>>(
  (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  'expected a JSON object',
);

export const BundleRefSchema = z.strictObject({ id: z.string().min(1).max(200), sha256: Sha256 });

export const TrajectorySkill = z.object({
  name: z.string(),
  version: z.number().int().positive(),
  sha256: Sha256,
  /** Whether the library holds that version (false: imported from another library; its text is kept with the row). */
  linked: z.boolean(),
});

export const Trajectory = z.object({
  id: TrajectoryUid,
  createdAt: z.string(),
  source: TrajectorySource,
  skill: TrajectorySkill.nullable(),
  condition: TrajectoryCondition.nullable(),
  /** The adapter key (64 hex digits) it ran with, else null. */
  adapter: Sha256.nullable(),
  bundle: BundleRefSchema.nullable(),
  sampling: TrajectorySampling,
  messages: z.array(TrajectoryMessage),
  verdict: Verdict.nullable(),
  rating: Rating.nullable(),
  details: Details,
});
export type Trajectory = z.infer<typeof Trajectory>;

/** A row of trajectories.list: the trajectory without its messages, with a preview of them. */
export const TrajectorySummary = Trajectory.omit({ messages: true, details: true }).extend({
  turns: z.number().int().nonnegative(),
  /** The last user message and the last assistant message, each cut to 200 characters. */
  prompt: z.string(),
  answer: z.string(),
});
export type TrajectorySummary = z.infer<typeof TrajectorySummary>;

export const TrajectoryFilter = z.strictObject({
  skill: SkillName.optional(),
  version: z.number().int().positive().optional(),
  source: TrajectorySource.optional(),
  /** `unrated`: rows with no rating. */
  rating: z.enum(['up', 'down', 'unrated']).optional(),
  /** `none`: rows no verifier judged. */
  verdict: z.enum(['passed', 'failed', 'none']).optional(),
});
export type TrajectoryFilter = z.infer<typeof TrajectoryFilter>;

export const TrajectoryListInput = TrajectoryFilter.extend({
  limit: z.number().int().min(1).max(1000).optional(),
  offset: z.number().int().min(0).optional(),
}).strict();
export type TrajectoryListInput = z.infer<typeof TrajectoryListInput>;

export const TrajectoryList = z.object({ total: z.number().int().nonnegative(), items: z.array(TrajectorySummary) });
export type TrajectoryList = z.infer<typeof TrajectoryList>;

export const TrajectoryAddInput = z.strictObject({
  source: TrajectorySource,
  /** A skill version in the library (absent version: the latest). */
  skill: z.strictObject({ name: SkillName, version: z.number().int().positive().optional() }).optional(),
  condition: TrajectoryConditionInput.optional(),
  adapter: Sha256.optional(),
  bundle: BundleRefSchema.optional(),
  sampling: TrajectorySampling.optional(),
  messages: z.array(TrajectoryMessage).min(1).max(500),
  verdict: Verdict.optional(),
  details: Details.optional(),
});
export type TrajectoryAddInput = z.infer<typeof TrajectoryAddInput>;

export const TrajectoryRateInput = z.strictObject({
  id: TrajectoryRef,
  /** null clears the rating (and its note). */
  rating: RatingValue.nullable(),
  note: z.string().max(2000).optional(),
});

export const AbsoluteFile = AbsolutePath;

export const TrajectoryExportInput = TrajectoryFilter.extend({
  file: AbsoluteFile,
  /** Replace a file that exists (else it is refused, untouched): docs/security.md "Writing where the user says". */
  overwrite: z.boolean().optional(),
  /** Only what stage 2 should learn from: a skill, an assistant turn last, rated up or passed by a verifier, never rated down. */
  stage2: z.boolean().optional(),
}).strict();
export type TrajectoryExportInput = z.infer<typeof TrajectoryExportInput>;

export const TrajectoryExportResult = z.object({
  file: z.string(),
  count: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
});

export const TrajectoryImportResult = z.object({
  imported: z.number().int().nonnegative(),
  /** Already there, identical. */
  unchanged: z.number().int().nonnegative(),
  /** Already there; the file's rating replaced the stored one. */
  updated: z.number().int().nonnegative(),
});
export type TrajectoryImportResult = z.infer<typeof TrajectoryImportResult>;

// ---- the JSONL line (export writes every field in this order; import fills what is absent)

const SnakeSampling = z.strictObject({
  temperature: samplingFields.temperature,
  top_k: samplingFields.topK,
  top_p: samplingFields.topP,
  repetition_penalty: samplingFields.repetitionPenalty,
  seed: samplingFields.seed,
  max_tokens: z.number().int().min(1).max(MAX_NEW_TOKENS).optional(),
});

const SAMPLING_KEYS = [
  ['temperature', 'temperature'],
  ['topK', 'top_k'],
  ['topP', 'top_p'],
  ['repetitionPenalty', 'repetition_penalty'],
  ['seed', 'seed'],
  ['maxTokens', 'max_tokens'],
] as const;

export function samplingToLine(s: TrajectorySampling): z.infer<typeof SnakeSampling> {
  const out: Record<string, number> = {};
  for (const [camel, snake] of SAMPLING_KEYS) if (s[camel] !== undefined) out[snake] = s[camel];
  return out;
}

export function samplingFromLine(s: z.infer<typeof SnakeSampling>): TrajectorySampling {
  const out: Record<string, number> = {};
  for (const [camel, snake] of SAMPLING_KEYS) if (s[snake] !== undefined) out[camel] = s[snake];
  return out;
}

/**
 * One line of `trajectories export`: the stage-2 fields first ({skill, skill_text, messages, source},
 * as training/src/pskills_train/train/build_episodes.py writes stage2.jsonl), then the rest. On
 * import `id` (absent: derived from the line's bytes), `created_at` (absent: now) and everything
 * after `source` may be left out.
 */
export const TrajectoryLine = z
  .strictObject({
    skill: SkillName.nullable(),
    skill_text: z
      .string()
      .max(4 * 1024 * 1024)
      .nullable()
      .optional(),
    messages: z.array(TrajectoryMessage).min(1).max(500),
    source: TrajectorySource,
    id: TrajectoryUid.optional(),
    created_at: z.iso.datetime({ offset: false, precision: 3 }).optional(),
    skill_version: z.number().int().positive().nullable().optional(),
    skill_sha256: Sha256.nullable().optional(),
    condition: TrajectoryConditionInput.nullable().optional(),
    adapter: Sha256.nullable().optional(),
    bundle: BundleRefSchema.nullable().optional(),
    sampling: SnakeSampling.optional(),
    verdict: Verdict.nullable().optional(),
    rating: Rating.nullable().optional(),
    details: Details.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.skill === null) {
      for (const k of ['skill_text', 'skill_version', 'skill_sha256'] as const) {
        if (v[k] != null) ctx.addIssue({ code: 'custom', path: [k], message: `must be null when "skill" is null` });
      }
    } else {
      if (v.skill_text == null)
        ctx.addIssue({
          code: 'custom',
          path: ['skill_text'],
          message: 'required when "skill" is set (the text the trajectory ran with)',
        });
      if (v.skill_version == null)
        ctx.addIssue({ code: 'custom', path: ['skill_version'], message: 'required when "skill" is set' });
    }
  });
export type TrajectoryLine = z.infer<typeof TrajectoryLine>;

// ---- settings

/** The studio's settings, each with its default. */
export const Settings = z.object({
  /** Compare, the Playground, verify and the endpoint (when a request asks) keep what they ran. */
  storeTrajectories: z.boolean(),
  /** An OpenAI-compatible chat-completions endpoint the studio may ask (evolve's LLM generator): its
   *  base URL, e.g. http://127.0.0.1:8080/v1 (POST {llmBaseUrl}/chat/completions); null: none. */
  llmBaseUrl: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/\S+$/, 'an http:// or https:// URL')
    .nullable(),
  /** The `model` sent to that endpoint. */
  llmModel: z.string().min(1).max(200).nullable(),
  /** Sent as `Authorization: Bearer …` when set (env PSKILLS_LLM_API_KEY wins over it). */
  llmApiKey: z.string().min(1).max(4096).nullable(),
  /** Where bundles run (docs/providers.md); the next bundle load uses it, --provider overrides it.
   *  An unavailable one falls back to cpu with a message (engine.info's provider.fallback). */
  executionProvider: z.enum(['cpu', 'webgpu', 'cuda']),
  /** The largest rank a merge may produce (docs/adapters.md "Rank caps"); the model's own dimensions
   *  cap it further. Over it, a merge is refused or truncated by svd, as the request chooses. */
  maxMergeRank: z.number().int('a whole number').min(1, 'at least 1').max(4096, 'at most 4096'),
});
export type Settings = z.infer<typeof Settings>;
export const DEFAULT_SETTINGS: Settings = {
  storeTrajectories: true,
  llmBaseUrl: null,
  llmModel: null,
  llmApiKey: null,
  executionProvider: 'cpu',
  maxMergeRank: 512,
};
export const SettingsPatch = Settings.partial().strict();
