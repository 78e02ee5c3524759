// DTOs for the adapter library: stored adapters, their statistics, merges, comparisons and the
// EMA global adapter's history (docs/design.md §1).
import { z } from 'zod';
import { OLD_INSTANT_KIND } from './instant-name';
import { AbsoluteDir } from './paths';
import { nameProblem, SkillName } from './skill-schemas';
import { SOURCES } from '../distill/practice';

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits');

/** An adapter id as users type it: a prefix (≥ 6 hex digits) of the adapter's 64-digit key. */
export const AdapterId = z
  .string()
  .min(6)
  .max(64)
  .regex(/^[0-9a-f]+$/, 'lowercase hex digits (a prefix of the adapter key)');

export const MergeMethod = z.enum(['cat', 'linear', 'svd']);
export type MergeMethod = z.infer<typeof MergeMethod>;

const Weight = z.number().min(-1e6).max(1e6);
const Rank = z.number().int().min(0).max(4096);

/** How an adapter was made. Sources are adapter keys, so the recipe means the same in any library. */
const RecipeShapes = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('import'), tensorsSha256: Sha256 }),
  z.object({
    kind: z.literal('merge'),
    method: MergeMethod,
    weights: z.array(Weight),
    rank: Rank.nullable(),
    sources: z.array(Sha256).min(1),
    // Then rehearsed: train steps over every source's skill practice, each with its own text in context.
    rehearse: z.object({ steps: z.number().int().positive(), seed: z.number().int() }).optional(),
  }),
  // sources: [the previous global adapter (null for version 1), the adapter merged in]
  z.object({
    kind: z.literal('ema'),
    beta: z.number().min(0).max(1),
    rankBudget: Rank,
    sources: z.tuple([Sha256.nullable(), Sha256]),
    // Then rehearsed: train steps over every listed lesson's practice, each with its own text in context.
    rehearsal: z
      .object({
        steps: z.number().int().positive(),
        lessons: z.array(Sha256).min(1),
        finalLoss: z.number(),
        seconds: z.number().nonnegative(),
      })
      .optional(),
  }),
  // A skill version through the bundle's hypernetwork; the skill and bundle hashes are in the key.
  z.object({ kind: z.literal('instant'), hypernet: z.enum(['perceiver', 't2l']), combine: z.literal('mean') }),
  // A skill version distilled through the bundle's train-step graph (docs/bundle-format.md "train_step"):
  // from the instant adapter (its lineage) or zero; practice questions counted by source; the run's outcome.
  z.object({
    kind: z.literal('distill'),
    from: z.enum(['instant', 'zero']),
    steps: z.number().int().positive(),
    lr: z.number().positive(),
    seed: z.number().int(),
    questions: z.record(z.string(), z.number().int().nonnegative()),
    finalLoss: z.number(),
    seconds: z.number().nonnegative(),
    // Where the practice came from (docs/distill.md "Practice"); absent on adapters made before it.
    practice: z.lazy(() => PracticeRecord).optional(),
  }),
]);
type InstantRecipe = Extract<z.output<typeof RecipeShapes>, { kind: 'instant' }>;
/** An instant recipe as rows and files from before the rename wrote it. */
type OldInstantRecipe = Omit<InstantRecipe, 'kind'> & { kind: typeof OLD_INSTANT_KIND };

/** `{kind: 'compile', …}` read as `{kind: 'instant', …}` (docs/api.md "Names"); anything else unchanged. */
export function instantRecipe(v: unknown): unknown {
  return v && typeof v === 'object' && (v as { kind?: unknown }).kind === OLD_INSTANT_KIND
    ? { ...v, kind: 'instant' }
    : v;
}

export const AdapterRecipe = z.preprocess(
  (v: z.input<typeof RecipeShapes> | OldInstantRecipe) => instantRecipe(v),
  RecipeShapes,
);
export type AdapterRecipe = z.infer<typeof AdapterRecipe>;

export const LineageEntry = z.object({ id: AdapterId, weight: z.number() });
export type LineageEntry = z.infer<typeof LineageEntry>;

export const AdapterSummary = z.object({
  /** Short id: the first 12 hex digits of `key`. */
  id: AdapterId,
  key: Sha256,
  rank: z.number().int().nonnegative(),
  alpha: z.number(),
  recipe: AdapterRecipe,
  lineage: z.array(LineageEntry),
  bundle: z.object({ id: z.string(), sha256: Sha256 }),
  skill: z.object({ name: z.string(), version: z.number().int().positive(), sha256: Sha256 }).nullable(),
  bytes: z.number().int().nonnegative(),
  tensorsSha256: Sha256,
  createdAt: z.string(),
  /** The name it was given (a merge's, or a rename); null: the studio names it from its skill and tier
   *  (common/adapters/name.ts). */
  name: z.string().nullable(),
});
export type AdapterSummary = z.infer<typeof AdapterSummary>;

/** A name a person gives an adapter: trimmed, one line. */
export const AdapterName = z
  .string()
  .trim()
  .min(1, 'give the adapter a name')
  .max(120, 'at most 120 characters')
  .regex(/^[^\p{Cc}]+$/u, 'one line, no control characters')
  // Bidi controls and invisible characters as skill names refuse them: two names that look alike differ.
  .superRefine((name, ctx) => {
    const why = nameProblem(name);
    if (why) ctx.addIssue({ code: 'custom', message: `name ${why}` });
  });

/** adapters.rename: a new name, or null for the one made from its skill and tier. */
export const RenameAdapterInput = z.object({ id: AdapterId, name: AdapterName.nullable() }).strict();
export type RenameAdapterInput = z.infer<typeof RenameAdapterInput>;

export const TargetValue = z.object({ layer: z.number().int().nonnegative(), module: z.string(), value: z.number() });

/** For the visualizer: ‖ΔW‖_F and the leading singular values of ΔW per (layer, module). */
export const AdapterStats = z.object({
  norms: z.object({ overall: z.number(), perTarget: z.array(TargetValue) }),
  singularValues: z.array(
    z.object({ layer: z.number().int().nonnegative(), module: z.string(), values: z.array(z.number()) }),
  ),
});
export type AdapterStats = z.infer<typeof AdapterStats>;

export const AdapterDetail = AdapterSummary.extend({
  shapes: z.array(
    z.object({
      layer: z.number().int().nonnegative(),
      module: z.string(),
      dIn: z.number().int(),
      dOut: z.number().int(),
    }),
  ),
  stats: AdapterStats,
});
export type AdapterDetail = z.infer<typeof AdapterDetail>;

export const AdapterWritten = z.object({ adapter: AdapterSummary, created: z.boolean() });
export type AdapterWritten = z.infer<typeof AdapterWritten>;

export const GetAdapterInput = z
  .object({ id: AdapterId, singularValues: z.number().int().min(0).max(256).optional() })
  .strict();
/** `dir`: a PEFT folder, or a llama.cpp LoRA `.gguf` file (docs/adapters.md "GGUF LoRA"). */
export const ImportAdapterInput = z.object({ dir: AbsoluteDir }).strict();
/** peft: a PEFT folder; gguf: one llama.cpp LoRA file; ollama: a folder with that file and a Modelfile. */
export const ExportFormat = z.enum(['peft', 'gguf', 'ollama']);
export type ExportFormat = z.infer<typeof ExportFormat>;
export const ExportAdapterInput = z
  .object({
    id: AdapterId,
    /** The folder written (peft, ollama), or with format gguf the `.gguf` file. */
    dir: AbsoluteDir,
    /** Replace an earlier export's three files (else such a folder is refused, untouched): docs/security.md. */
    overwrite: z.boolean().optional(),
    format: ExportFormat.optional(),
    /** GGUF tensor type (gguf, ollama); default f32. */
    dtype: z.enum(['f32', 'f16']).optional(),
    /** ollama: the base GGUF for FROM, when the bundle's record of it is missing or moved. */
    base: AbsoluteDir.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    const format = v.format ?? 'peft';
    if (format === 'gguf' && !v.dir.endsWith('.gguf'))
      ctx.addIssue({ code: 'custom', path: ['dir'], message: 'with format gguf, the path of a file ending in .gguf' });
    if (format === 'peft' && v.dtype)
      ctx.addIssue({ code: 'custom', path: ['dtype'], message: 'goes with gguf or ollama' });
    if (format !== 'ollama' && v.base) ctx.addIssue({ code: 'custom', path: ['base'], message: 'goes with ollama' });
  });
export type ExportAdapterInput = z.infer<typeof ExportAdapterInput>;
export const ExportResult = z.object({ dir: z.string(), files: z.array(z.string()) });

export const MAX_REHEARSE = 400;
export const MergeInput = z
  .object({
    ids: z.array(AdapterId).min(1).max(64),
    method: MergeMethod,
    weights: z.array(Weight).optional(),
    rank: z.number().int().min(1).max(4096).optional(),
    /** A result over the rank cap (the maxMergeRank setting, the model's dimensions: docs/api.md
     *  "Rank caps"): refused with the numbers (default), or truncated to the cap by svd. */
    overRank: z.enum(['refuse', 'svd']).optional(),
    /** The merged adapter's name; absent: made from its parts' names ("a@1 + b@2 (cat)"). */
    name: AdapterName.optional(),
    /** Then this many distillation steps over every source's skill practice, each answered with its own
     *  skill in context (docs/distill.md "Merging distilled adapters"); every source must come from a
     *  skill version and the bundle must have a train-step graph. */
    rehearse: z.number().int().min(1).max(MAX_REHEARSE).optional(),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .optional(),
  })
  .strict()
  .refine((v) => v.weights === undefined || v.weights.length === v.ids.length, {
    message: 'give one weight per id',
    path: ['weights'],
  })
  .refine((v) => v.method !== 'svd' || v.rank !== undefined, { message: 'svd needs a target rank', path: ['rank'] })
  .refine((v) => v.method === 'svd' || v.rank === undefined, { message: 'rank applies to svd only', path: ['rank'] })
  .refine((v) => v.rehearse !== undefined || v.seed === undefined, {
    message: 'seed applies to rehearse only',
    path: ['seed'],
  });
export type MergeInput = z.infer<typeof MergeInput>;

/** adapters.merge's progress: `merge` once the sources are summed (steps: the rehearsal's, 0 without one),
 *  then, with `rehearse`, the teacher pass and each rehearsal step with its loss, as adapters.distill. */
export const MergeProgress = z.object({
  phase: z.enum(['merge', 'teacher', 'train']),
  step: z.number().int().nonnegative(),
  steps: z.number().int().nonnegative(),
  loss: z.number().nullable(),
  secondsLeft: z.number().nullable(),
});
export type MergeProgress = z.infer<typeof MergeProgress>;

const NullableTargetValue = z.object({
  layer: z.number().int().nonnegative(),
  module: z.string(),
  value: z.number().nullable(),
});
/** Per-target values and one over all targets stacked; null where a ratio is infinite (x/0). */
const NullableSummary = z.object({ overall: z.number().nullable(), perTarget: z.array(NullableTargetValue) });
const Summary = z.object({ overall: z.number(), perTarget: z.array(TargetValue) });

/** adapters.mergePreview: what adapters.merge would store, computed and measured, nothing written. */
export const MergePreview = z.object({
  method: MergeMethod,
  rank: z.number().int().nonnegative(),
  weights: z.array(z.number()),
  sources: z.array(z.object({ id: AdapterId, rank: z.number().int().nonnegative(), norm: z.number() })),
  /** ‖ΔW‖_F of the result */
  norms: Summary,
  /** ‖Σ wᵢΔWᵢ‖_F: the exact sum the merge approximates (cat and svd) or departs from (linear) */
  exactNorms: Summary,
  /** ‖result − exact‖_F / ‖exact‖_F */
  error: NullableSummary,
  /** svd only: ‖result‖²/‖exact‖², the share of Σσ² the truncation keeps */
  energyKept: NullableSummary.nullable(),
  /** The library already holds this merge (adapters.merge would return it, created: false). */
  existing: AdapterId.nullable(),
  /** The rehearsal steps adapters.merge would run after this merge (null: none); the figures above
   *  describe the merge before it, and rehearsal leaves the train-step graph's rank. */
  rehearse: z.number().int().positive().nullable(),
});
export type MergePreview = z.infer<typeof MergePreview>;

export const VisualizeInput = z
  .object({ id: AdapterId, singularValues: z.number().int().min(1).max(256).optional() })
  .strict();

/** adapters.visualize: the merge visualizer's data for one adapter (heatmap norms come from adapters.get). */
export const AdapterVisual = z.object({
  id: AdapterId,
  /** ‖ΔW's j-th rank-1 piece‖_F over all targets, one per rank slot */
  rankSlots: z.array(z.number()),
  /** A cat merge's rank blocks in slot order, one per source; [] for any other adapter. */
  blocks: z.array(
    z.object({
      source: AdapterId,
      weight: z.number(),
      offset: z.number().int().nonnegative(),
      rank: z.number().int().nonnegative(),
    }),
  ),
  /**
   * Singular values per target. For an svd merge or an EMA version: `before` is the exact weighted sum
   * of its sources, `after` the stored (truncated) adapter. For any other: `before` is the adapter's own,
   * `after` null.
   */
  spectra: z.array(
    z.object({
      layer: z.number().int().nonnegative(),
      module: z.string(),
      before: z.array(z.number()),
      after: z.array(z.number()).nullable(),
    }),
  ),
  /** svd / EMA: the truncation's rank and the share of the exact sum's energy it keeps */
  truncation: z.object({ rank: z.number().int().nonnegative(), energyKept: NullableSummary }).nullable(),
});
export type AdapterVisual = z.infer<typeof AdapterVisual>;

/** adapters.similarity: 2–16 adapters of one bundle, and the weights of the linear-vs-cat check. */
export const SimilarityInput = z
  .object({ ids: z.array(AdapterId).min(2).max(16), weights: z.array(Weight).optional() })
  .strict()
  .refine((v) => v.weights === undefined || v.weights.length === v.ids.length, {
    message: 'give one weight per id',
    path: ['weights'],
  });

/** Relative errors are null where the exact sum is 0 but the baseline is not (infinite). */
export const SimilarityResult = z.object({
  ids: z.array(AdapterId),
  /** cosine[i][j] of ΔW_i and ΔW_j over all targets stacked */
  cosine: z.array(z.array(z.number())),
  perTarget: z.array(z.object({ layer: z.number().int(), module: z.string(), cosine: z.array(z.array(z.number())) })),
  /** ‖linear − cat‖_F / ‖cat‖_F: how far the factor-wise baseline lands from the exact weighted sum */
  linearVsCat: z.union([
    z.object({
      overall: z.number().nullable(),
      perTarget: z.array(z.object({ layer: z.number().int(), module: z.string(), value: z.number().nullable() })),
    }),
    z.object({ unavailable: z.string() }),
  ]),
});
export type SimilarityInput = z.infer<typeof SimilarityInput>;
export type SimilarityResult = z.infer<typeof SimilarityResult>;

/** What `adapters.compare` (the deprecated name of `adapters.similarity`) adds to the result. */
export const SIMILARITY_DEPRECATION =
  'adapters.compare is deprecated and will be removed in the next release: call adapters.similarity (same input, same result)';
export const DeprecatedCompareResult = SimilarityResult.extend({ deprecated: z.string() });
export type DeprecatedCompareResult = z.infer<typeof DeprecatedCompareResult>;

export const EmaUpdateInput = z
  .object({
    adapterId: AdapterId,
    beta: z.number().min(0).max(1).optional(),
    rankBudget: z.number().int().min(1).max(4096).optional(),
  })
  .strict();

export const GlobalVersion = z.object({
  version: z.number().int().positive(),
  adapter: AdapterId,
  kind: z.enum(['ema', 'rollback']),
  beta: z.number(),
  rank: z.number().int().nonnegative(),
  parentVersion: z.number().int().positive().nullable(),
  /** for a rollback: the version whose adapter it brought back */
  restoresVersion: z.number().int().positive().nullable(),
  createdAt: z.string(),
  /** where it came from: a lesson merged in, an adopted run's global adapter, or a person (update form, API, rollback) */
  source: z.enum(['lesson', 'run', 'manual']),
});
export type GlobalVersion = z.infer<typeof GlobalVersion>;

export const EmaHistory = z.object({
  bundle: z.object({ id: z.string(), sha256: Sha256 }),
  versions: z.array(GlobalVersion),
});
export type EmaHistory = z.infer<typeof EmaHistory>;

export const EmaUpdated = z.object({ version: GlobalVersion, adapter: AdapterSummary });

/** A skill version as the compile and compare calls name it (absent version = the latest). */
export const SkillRef = z
  .object({
    name: SkillName,
    version: z.number().int().positive().optional(),
  })
  .strict();
export type SkillRef = z.infer<typeof SkillRef>;

export const SkillVersionRef = z.object({ name: z.string(), version: z.number().int().positive() });
export type SkillVersionRef = z.infer<typeof SkillVersionRef>;

/** Where a practice question came from: the version's tests, its Examples, a cloze per section, or typed
 *  by the user in the studio's practice panel. */
export const PracticeSourceSchema = z.enum(SOURCES);

export const PracticeQuestionSchema = z
  .object({
    question: z.string().trim().min(1).max(4000),
    source: PracticeSourceSchema,
    /** Teacher-forced (an Examples reply, a section's text); absent: the teacher answers. */
    answer: z.string().max(8000).optional(),
    /** The chat before the answer when a test is more than one user turn; `question` is its last turn. */
    messages: z
      .array(z.strictObject({ role: z.enum(['user', 'assistant', 'tool']), content: z.string().max(100_000) }))
      .min(1)
      .max(100)
      .optional(),
    /** A copy of a test with its numbers redrawn (docs/distill.md "Practice"), counted apart as `tests_redrawn`. */
    redrawn: z.literal(true).optional(),
  })
  .strict()
  .refine((q) => !q.messages || q.messages.at(-1)!.content === q.question, {
    message: 'question must be the last turn of messages',
    path: ['question'],
  });

/** What a distillation practised on, recorded with its adapter and shown in the practice panel. */
export const PracticeRecord = z.object({
  /** The sources tried, in order (docs/distill.md "Practice"). */
  tried: z.array(z.string()),
  /** Test ids practised on, and those held out to judge the adapter (1 in 4, seeded; none below 4 tests). */
  practisedTests: z.array(z.string()),
  heldOutTests: z.array(z.string()),
  /** Who wrote the self-written requests: the configured endpoint, the engine (the teacher), or nobody. */
  writer: z.enum(['endpoint', 'engine']).nullable(),
  /** Self-written requests dropped as empty, duplicates or copies of the skill's sentences. */
  dropped: z.object({ empty: z.number().int(), duplicate: z.number().int(), copy: z.number().int() }),
  warnings: z.array(z.string()),
});
export type PracticeRecord = z.infer<typeof PracticeRecord>;
export type PracticeQuestionInput = z.infer<typeof PracticeQuestionSchema>;

export const DistillInput = z
  .object({
    skill: SkillRef,
    /** The questions to practise on (the practice panel's list after add/remove); absent: the version's own. */
    questions: z.array(PracticeQuestionSchema).min(1).max(512).optional(),
    /** Add requests the teacher (or the configured endpoint) writes; default: only without `questions`. */
    selfWritten: z.boolean().optional(),
    steps: z.number().int().min(1).max(10_000).optional(),
    from: z.enum(['instant', 'zero']).optional(),
    /** Adam's step size (default 3e-3, docs/distill.md). Below 1e-6 the steps move no Float32 weight:
     *  the result would be the adapter it started from. */
    lr: z
      .number()
      .min(
        1e-6,
        'at least 1e-6: a smaller learning rate changes no weight, and the result would be the adapter it starts from',
      )
      .max(1, 'at most 1')
      .optional(),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31)
      .optional(),
  })
  .strict();
export type DistillInput = z.infer<typeof DistillInput>;

/** What the skill page needs before distilling: whether the current bundle can (a reason when not), the
 *  version's practice questions (or why there are none), seconds per train step measured here on the
 *  bucket those questions need, and the newest distilled adapter of this version on this bundle. */
export const DistillPlan = z.object({
  skill: SkillVersionRef,
  bundle: z.object({ id: z.string() }),
  available: z.boolean(),
  /** Why only Instant is offered (no train-step graph), else null. */
  reason: z.string().nullable(),
  questions: z.array(PracticeQuestionSchema),
  /** The message when the version has no practice questions, else null. */
  questionsError: z.string().nullable(),
  /** The sources tried, the tests held out, and (with no tests) the advice to write some. */
  practice: z.object({
    tried: z.array(z.string()),
    tests: z.number().int().nonnegative(),
    heldOutTests: z.array(z.string()),
    /** Who will write self-written requests at the run: the configured endpoint or the engine. */
    writer: z.enum(['endpoint', 'engine']).nullable(),
    advice: z.string().nullable(),
  }),
  defaultSteps: z.number().int().positive(),
  estimate: z
    .object({
      bucket: z.object({ batch: z.number().int().positive(), length: z.number().int().positive() }),
      secondsPerStep: z.number().positive(),
      /** The train steps' estimated peak memory and the machine's free memory when planned, bytes. */
      memoryBytes: z.number().nonnegative(),
      freeMemoryBytes: z.number().nonnegative(),
    })
    .nullable(),
  distilled: AdapterSummary.nullable(),
});
export type DistillPlan = z.infer<typeof DistillPlan>;

/** adapters.distill events: the teacher pass (step 0), then each step with its loss and the time left. */
export const DistillProgressEvent = z.object({
  skill: SkillVersionRef,
  phase: z.enum(['teacher', 'train']),
  step: z.number().int().nonnegative(),
  steps: z.number().int().positive(),
  loss: z.number().nullable(),
  secondsLeft: z.number().nullable(),
});
export type DistillProgressEvent = z.infer<typeof DistillProgressEvent>;

export const DistillResultSchema = z.object({
  adapter: AdapterSummary,
  rank: z.number().int().positive(),
  skill: SkillVersionRef,
  steps: z.number().int().positive(),
  losses: z.array(z.number()),
  seconds: z.number().nonnegative(),
  teacherSeconds: z.number().nonnegative(),
  questions: z.array(z.object({ question: z.string(), source: z.string() })),
  practice: PracticeRecord.optional(),
});
export type DistillResultSchema = z.infer<typeof DistillResultSchema>;

/** adapters.compile events: chunks done so far (0 before the first) of `chunks`. */
export const CompileProgress = z.object({
  skill: SkillVersionRef,
  chunk: z.number().int().nonnegative(),
  chunks: z.number().int().positive(),
  tokens: z.number().int().nonnegative(),
});
export type CompileProgress = z.infer<typeof CompileProgress>;

export const CompileResult = z.object({
  adapter: AdapterSummary,
  rank: z.number().int().positive(),
  /** Milliseconds this call took (a cache hit only looks the adapter up). */
  ms: z.number().nonnegative(),
  /** true: the library already held the adapter for this (skill version, bundle). */
  cached: z.boolean(),
  skill: SkillVersionRef.extend({ sha256: Sha256 }),
  chunks: z.number().int().positive(),
  tokens: z.number().int().positive(),
});
export type CompileResult = z.infer<typeof CompileResult>;
