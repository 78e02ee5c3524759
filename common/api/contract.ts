// The StudioApi contract: every method and event stream the UI, the CLI and tests may use.
// One table; transports and the preload are generated from it, never hand-listed.
import { z } from 'zod';
import { type BridgeOf, type ClientOf, type HandlersOf, method, stream } from './define';
import {
  AdapterDetail,
  AdapterId,
  AdapterVisual,
  AdapterSummary,
  AdapterWritten,
  CompileProgress,
  CompileResult,
  DistillInput,
  DistillPlan,
  DistillProgressEvent,
  DistillResultSchema,
  DeprecatedCompareResult,
  EmaHistory,
  EmaUpdated,
  EmaUpdateInput,
  ExportAdapterInput,
  ExportResult,
  GetAdapterInput,
  GlobalVersion,
  ImportAdapterInput,
  MergeInput,
  MergeProgress,
  MergePreview,
  RenameAdapterInput,
  SimilarityInput,
  SimilarityResult,
  SkillRef,
  VisualizeInput,
} from './adapter-schemas';
import {
  CompareEvent,
  CompareRunInput,
  CompareRunResult,
  EngineInfo,
  GenerateInput,
  GenerateResult,
  TokenDelta,
} from './engine-schemas';
import {
  ImportProgress,
  ImportUploadInput,
  ImportResult,
  ParsedSkill,
  SkillDetail,
  NewSkillName,
  SkillName,
  SkillSummary,
  VersionMeta,
} from './skill-schemas';
import { AbsoluteDir } from './paths';
import { ExampleSet } from './example-schemas';
import { ModelCard, ModelCreateInput, ModelCreateProgress, ModelList } from './model-schemas';
import {
  AbsoluteFile,
  Settings,
  SettingsPatch,
  Trajectory,
  TrajectoryAddInput,
  TrajectoryExportInput,
  TrajectoryExportResult,
  TrajectoryImportResult,
  TrajectoryList,
  TrajectoryListInput,
  TrajectoryRateInput,
  TrajectoryRef,
} from './trajectory-schemas';
import { SavedTestSet, SkillTests, VerifyEvent, VerifyRunInput, VerifyRunResult } from './verify-schemas';
import {
  ContinualAdoptInput,
  ContinualAdoption,
  ContinualEvent,
  ContinualResumeInput,
  ContinualRunDetail,
  ContinualRunInput,
  ContinualRunResult,
  ContinualRunSummary,
} from './continual-schemas';
import {
  EvolveAccepted,
  EvolveCandidate,
  EvolveCandidateRef,
  EvolveEvent,
  EvolveResult,
  EvolveRunDetail,
  EvolveRunId,
  EvolveRunInput,
  EvolveRunSummary,
} from './evolve-schemas';

export const MAX_SKILL_BYTES = 1024 * 1024;

export { SkillName };

const Empty = z.object({}).strict();

export const AppInfo = z.object({
  version: z.string(),
  dataDir: z.string(),
  dbPath: z.string(),
  skills: z.number().int().nonnegative(),
});
export type AppInfo = z.infer<typeof AppInfo>;

export const studioContract = {
  app: {
    info: method(Empty, AppInfo),
  },
  skills: {
    list: method(
      z.object({ query: z.string().max(200).optional(), package: z.string().max(214).optional() }).strict(),
      z.array(SkillSummary),
    ),
    packages: method(Empty, z.array(z.object({ package: z.string(), skills: z.number().int() }))),
    get: method(z.object({ name: SkillName, version: z.number().int().positive().optional() }).strict(), SkillDetail),
    save: method(
      z.object({ name: SkillName, content: z.string().max(MAX_SKILL_BYTES) }).strict(),
      z.object({ version: VersionMeta, created: z.boolean(), parsed: ParsedSkill }),
    ),
    /** Version 1 of a new skill from the studio's SKILL.md template (provenance `template`). Refused
     *  with `conflict`, nothing written, when a skill of that name exists. */
    create: method(z.object({ name: NewSkillName }).strict(), SkillDetail),
    validate: method(
      z.object({ content: z.string().max(MAX_SKILL_BYTES), folderName: z.string().max(200).optional() }).strict(),
      ParsedSkill,
    ),
    /**
     * The skill and every version of it. Refused (conflict, nothing deleted) while adapters compiled
     * from one of its versions exist: `details.adapters` lists them as {id, version}.
     */
    delete: method(
      z.object({ name: SkillName }).strict(),
      z.object({ deleted: z.string(), versions: z.number().int().positive() }),
    ),
  },
  import: {
    run: stream(
      z
        .object({
          source: z
            .string()
            .min(1)
            .max(4096)
            .refine((p) => !p.includes('\0'), {
              message: 'must not contain a NUL character (U+0000); no path or npm package name can',
            }),
        })
        .strict(),
      ImportProgress,
      ImportResult,
    ),
    /** A .tgz as bytes (a browser tab's dropped file has no path): kept content-addressed under the
     *  data folder's cache/uploads (so provenance names a file that exists), then imported as `run`. */
    upload: stream(ImportUploadInput, ImportProgress, ImportResult),
    /** "Try an example": the SkillWorld example skills with their practice questions as tests (only
     *  where a version has none) and their held-out tasks, to run on the compare page. */
    example: method(Empty, ExampleSet),
  },
  engine: {
    /** Loads a bundle folder (absent: the default bundle) and makes it current. */
    loadBundle: method(z.object({ dir: AbsoluteDir.optional() }).strict(), EngineInfo),
    info: method(Empty, EngineInfo),
    generate: stream(GenerateInput, TokenDelta, GenerateResult),
  },
  models: {
    /** Every bundle the studio knows, each with its card (bundle.json, size on disk), and which is active. */
    list: method(Empty, ModelList),
    /** Loads the bundle folder into the engine and makes it current; the list after the change. */
    activate: method(z.object({ dir: AbsoluteDir }).strict(), ModelList),
    /** A bundle from a local Llama / Qwen2 / Mistral checkpoint folder, written to <data folder>/bundles/<id>
     *  by the code of `pskills bundle create --from-hf`; progress per exporter step, Cancel leaves nothing. */
    create: stream(ModelCreateInput, ModelCreateProgress, ModelCard),
  },
  adapters: {
    list: method(Empty, z.array(AdapterSummary)),
    /** Summary, shapes and visualizer statistics (‖ΔW‖_F, leading singular values per target). */
    get: method(GetAdapterInput, AdapterDetail),
    /** A PEFT folder, checked against the current bundle's targets and dims. */
    import: method(ImportAdapterInput, AdapterWritten),
    /** PEFT folder + pskills.json sidecar (skill hash, bundle hash, recipe). */
    export: method(ExportAdapterInput, ExportResult),
    /**
     * cat: exact Σ wᵢΔWᵢ at rank Σrᵢ (the default). svd: the same sum truncated to `rank`.
     * linear: the factor-wise BASELINE (A = Σ·Aᵢ, B = Σ·Bᵢ, equal ranks only), with cross terms;
     * kept for comparison, not for real merges. With `rehearse`, progress per rehearsal step; a cancel
     * stores nothing.
     */
    merge: stream(MergeInput, MergeProgress, AdapterWritten),
    /** The merge adapters.merge would store (rank, norms, error against the exact sum), without storing it. */
    mergePreview: method(MergeInput, MergePreview),
    /** Visualizer data: rank-slot norms, a cat merge's blocks by source, spectra before/after svd truncation. */
    visualize: method(VisualizeInput, AdapterVisual),
    /** Pairwise cosine of ΔW and the linear baseline's error against the exact sum. */
    similarity: method(SimilarityInput, SimilarityResult),
    /**
     * @deprecated The old name of `similarity` (it read like `compare.run`), kept for one release:
     * the same handler, and the result adds `deprecated` (a note, also logged once).
     */
    compare: method(SimilarityInput, DeprecatedCompareResult),
    /** Refused (conflict) while a merge's lineage or a global version names the adapter. */
    delete: method(z.object({ id: AdapterId }).strict(), z.object({ deleted: z.string() })),
    /** Gives an adapter the name every list shows (null: the one made from its skill and tier); its id,
     *  key and bytes stay as they are. */
    rename: method(RenameAdapterInput, AdapterSummary),
    /**
     * A skill version → adapter through the current bundle's hypernetwork, with progress per encoder
     * chunk; cached by (skill version sha256, bundle sha256): the same input returns the stored adapter.
     */
    compile: stream(SkillRef, CompileProgress, CompileResult),
    /**
     * A skill version distilled into an adapter with the current bundle's train-step graph (teacher:
     * the skill in context on practice questions), from its instant adapter or zero; progress per step;
     * nothing is stored when cancelled, failed or non-finite. A second one of the same version at once
     * is refused (conflict).
     */
    distill: stream(DistillInput, DistillProgressEvent, DistillResultSchema),
    /** Before distilling: available or why not, the practice questions with their sources, seconds per step
     *  measured on this machine, and the version's newest distilled adapter on the current bundle. */
    distillPlan: method(SkillRef, DistillPlan),
  },
  compare: {
    /** none / in_context / instant / wrong_skill side by side, in one batch (per-row adapters). */
    run: stream(CompareRunInput, CompareEvent, CompareRunResult),
  },
  ema: {
    /** Appends a global version: ΔW_g ← (1−β)ΔW_g + βΔW_new, svd to the rank budget. */
    update: method(EmaUpdateInput, EmaUpdated),
    /** The current bundle's global versions, newest first. */
    history: method(Empty, EmaHistory),
    /** Appends a version that brings back an older version's adapter; history is never rewritten. */
    rollback: method(z.object({ version: z.number().int().positive() }).strict(), GlobalVersion),
  },
  trajectories: {
    /** Newest first, filtered; rows without their messages (a preview of the last prompt and answer). */
    list: method(TrajectoryListInput, TrajectoryList),
    /** One trajectory, messages included; `id` is its uid or a unique prefix (≥ 6 hex digits). */
    show: method(z.object({ id: TrajectoryRef }).strict(), Trajectory),
    /** Stores a trajectory whatever the setting says; `skill` must be a version in the library. */
    add: method(TrajectoryAddInput, Trajectory),
    /** Sets (up/down, with an optional note) or clears (null) the user's rating. */
    rate: method(TrajectoryRateInput, Trajectory),
    /** JSONL, one TrajectoryLine per row, oldest first, written to a temp file then renamed to `file`. */
    export: method(TrajectoryExportInput, TrajectoryExportResult),
    /** A JSONL file: every line checked first (the first bad one refused by line number, nothing
     *  written), then all in one transaction. */
    import: method(z.object({ file: AbsoluteFile }).strict(), TrajectoryImportResult),
  },
  settings: {
    get: method(Empty, Settings),
    /** Stores the given settings; returns them all. */
    set: method(SettingsPatch, Settings),
  },
  verify: {
    /** The version's verifier tests: its own, else the newest earlier version's (`from`). */
    tests: method(z.object({ name: SkillName, version: z.number().int().positive().optional() }).strict(), SkillTests),
    /** Replaces the version's tests. */
    setTests: method(
      z.object({ name: SkillName, version: z.number().int().positive().optional(), tests: SavedTestSet }).strict(),
      SkillTests,
    ),
    /** Runs the version's tests greedily (instant, in_context, none, or an adapter) → pass rate per test and overall. */
    run: stream(VerifyRunInput, VerifyEvent, VerifyRunResult),
  },
  evolve: {
    /** A new run: baseline, then per iteration candidates from the best text so far, each scored in
     *  context and compiled; the best (when it beats the baseline) becomes a version, compiled. */
    run: stream(EvolveRunInput, EvolveEvent, EvolveResult),
    /** Goes on with a stopped run (killed, cancelled or failed) from its stored rows. */
    resume: stream(z.strictObject({ run: EvolveRunId }), EvolveEvent, EvolveResult),
    /** Runs newest first, of one skill when named. */
    list: method(z.strictObject({ name: SkillName.optional() }), z.array(EvolveRunSummary)),
    /** A run with every candidate: text, diff against its parent, scores, status. */
    get: method(z.strictObject({ run: EvolveRunId }), EvolveRunDetail),
    /** The candidate becomes the skill's next version (provenance evolve), compiled with the loaded bundle. */
    accept: method(EvolveCandidateRef, EvolveAccepted),
    /** Marks the candidate rejected (an accepted one stays). */
    reject: method(EvolveCandidateRef, EvolveCandidate),
  },
  continual: {
    /** SkillWorld episodes: each verified episode's lesson compiled and absorbed by the mode (merge
     *  writes the global adapter by EMA), then the held-out tasks of every lesson so far measured. */
    run: stream(ContinualRunInput, ContinualEvent, ContinualRunResult),
    /** Goes on with a stopped run (killed, cancelled or failed): measured episodes are kept as stored. */
    resume: stream(ContinualResumeInput, ContinualEvent, ContinualRunResult),
    /** The run workspaces (data folder runs/), newest first, each with its status and curve. */
    list: method(Empty, z.object({ runs: z.array(ContinualRunSummary) })),
    /** One run: its curve, lessons and global-adapter versions. */
    get: method(ContinualResumeInput, ContinualRunDetail),
    /** Copies a lesson or the run's global adapter into the Library, named and versioned. */
    adopt: method(ContinualAdoptInput, ContinualAdoption),
    /** What was adopted into the Library, newest first. */
    adoptions: method(Empty, z.object({ adoptions: z.array(ContinualAdoption) })),
    /** Removes the run's workspace and nothing else. */
    delete: method(ContinualResumeInput, z.object({ run: z.string(), deleted: z.boolean() })),
  },
} as const;

export type StudioContract = typeof studioContract;
export type StudioApi = ClientOf<StudioContract>;
export type StudioHandlers = HandlersOf<StudioContract>;
export type StudioBridge = BridgeOf<StudioContract>;
