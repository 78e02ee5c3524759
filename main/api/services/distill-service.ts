// Distilling a skill version into an adapter with the current bundle's train-step graph (docs/bundle-
// format.md "train_step"), in the engine worker: practice from the version's tests (1 in 4 held out to
// judge), its Examples, synthesized and self-written requests and its sections, then follow-ups to the
// teacher's tool calls (docs/distill.md "Practice"); init from the instant adapter (its lineage) or zero. The adapter is stored only when every
// step finished with a finite loss; a cancel or failure stores nothing.
import type {
  DistillInput,
  DistillPlan,
  DistillProgressEvent,
  DistillResultSchema,
  PracticeRecord,
  SkillRef,
} from '../../../common/api/adapter-schemas';
import {
  gather,
  practisedTests,
  sourceCounts,
  splitTests,
  STUDIO_SOURCES,
  type PracticeQuestion,
  type PracticeSource,
} from '../../../common/distill/practice';
import { StudioError } from '../../../common/errors';
import { FILE_RECIPE, recipeOf } from '../../engine/distill-recipe';
import { sharedEngine } from '../../engine/engine-client';
import type { DistillOptions, DistillResult } from '../../engine/distill';
import { estimateBucket } from '../../engine/distill-batch';
import type { DistillPart } from '../../engine/distill-parts';
import { estimateDistillMemory, freeMemoryBytes, memoryRefusal } from '../../engine/distill-memory';
import { bucketKey, trainStepEntry, type Bucket } from '../../engine/train-step';
import type { BundleInfo, EngineAdapter } from '../../engine';
import type { BundleManifest } from '../../engine/manifest';
import type { AdaptersRepo, StoredAdapter } from '../../store/adapters-repo';
import type { SkillTestsRepo } from '../../store/skill-tests-repo';
import type { AdapterFactory, CurrentSite, ResolvedSkill } from './adapter-factory';
import { shortId, summaryOf } from './adapter-summaries';
import type { BundleRegistry } from './bundle-registry';
import type { CompileService } from './compile-service';
import type { PracticeWriter, Written } from './practice-writer';

const CANCELLED = 'distillation cancelled; nothing was stored';
const ADVICE =
  'This skill has no tests: it practises on requests made from its text. Write 3–5 tests (prompts with what a good answer must contain) to practise on what you ask and to judge the adapter.';

type TimeStep = (bundle: BundleInfo, bucket: Bucket) => Promise<number>;

type DistillMany = (
  bundle: BundleInfo,
  key: string,
  parts: readonly DistillPart[],
  options: DistillOptions,
) => Promise<DistillResult>;

type Distill = (
  bundle: BundleInfo,
  key: string,
  skill: string,
  questions: readonly PracticeQuestion[],
  options: DistillOptions,
) => Promise<DistillResult>;

/** What distilling needs, by name; `engine` replaces the shared engine worker (tests). */
export interface DistillDeps {
  /** Resolves the skill version and the bundle once, stores and summarises the distilled adapter. */
  factory: Pick<AdapterFactory, 'skill' | 'site' | 'make' | 'engineOf'>;
  /** The instant adapter a distillation starts from. */
  compiler: Pick<CompileService, 'compileAdapter'>;
  tests: Pick<SkillTestsRepo, 'get'>;
  /** `bundleRecord`: a rehearsal's bundle, for its recipe's practice limit. */
  repo: Pick<AdaptersRepo, 'list' | 'bundleRecord'>;
  bundles: Pick<BundleRegistry, 'current'>;
  engine?: { distill: Distill; timeStep: TimeStep; distillMany: DistillMany };
  /** Self-written practice; null or absent: none (the other sources only). */
  writer?: Pick<PracticeWriter, 'write' | 'endpoint'> | null;
  freeMemory?: () => number;
}

export class DistillService {
  private readonly factory: DistillDeps['factory'];
  private readonly compiler: DistillDeps['compiler'];
  private readonly tests: DistillDeps['tests'];
  private readonly repo: DistillDeps['repo'];
  private readonly bundles: DistillDeps['bundles'];
  private readonly distill: Distill;
  private readonly timeStep: TimeStep;
  private readonly distillMany: DistillMany;
  private readonly writer: Pick<PracticeWriter, 'write' | 'endpoint'> | null;
  private readonly freeMemory: () => number;

  constructor(deps: DistillDeps) {
    ({
      factory: this.factory,
      compiler: this.compiler,
      tests: this.tests,
      repo: this.repo,
      bundles: this.bundles,
    } = deps);
    this.distill = deps.engine?.distill ?? ((b, k, s, q, o) => sharedEngine().distill(b, k, s, q, o));
    this.timeStep = deps.engine?.timeStep ?? ((b, bucket) => sharedEngine().timeTrainStep(b, bucket));
    this.distillMany = deps.engine?.distillMany ?? ((b, k, p, o) => sharedEngine().distillParts(b, k, p, o));
    this.writer = deps.writer ?? null;
    this.freeMemory = deps.freeMemory ?? freeMemoryBytes;
  }

  /** Seconds per step, measured once per (bundle folder, bucket) in this process. */
  private readonly stepSeconds = new Map<string, Promise<number>>();

  /** The newest distilled adapter of this skill version on the bundle with this row id, else null. */
  latestDistilled(skill: { name: string; version: number }, bundleRowId: number): StoredAdapter | null {
    return (
      this.repo
        .list() // newest first
        .find(
          (a) =>
            a.recipe.kind === 'distill' &&
            a.bundle.rowId === bundleRowId &&
            a.skill?.name === skill.name &&
            a.skill.version === skill.version,
        ) ?? null
    );
  }

  /** The version's newest distilled adapter on the current bundle, ready for generation; null when none. */
  async distilledAdapter(ref: SkillRef): Promise<{ row: StoredAdapter; engine: EngineAdapter } | null> {
    const { skill, bundle, bundleId } = await this.factory.site(ref);
    const row = this.latestDistilled({ name: skill.name, version: skill.version.version }, bundleId);
    return row ? { row, engine: this.factory.engineOf(row, bundle) } : null;
  }

  async plan(ref: SkillRef): Promise<DistillPlan> {
    const { skill, bundle, bundleId } = await this.factory.site(ref);
    const who = { name: skill.name, version: skill.version.version };
    const latest = this.latestDistilled(who, bundleId);
    let questions: PracticeQuestion[] = [];
    let questionsError: string | null = null;
    const practice = this.practice(skill, 0, recipeOf(bundle.manifest).questions);
    try {
      questions = practice.questions();
    } catch (err) {
      questionsError = (err as Error).message;
    }
    let reason = trainStepRefusal(bundle);
    let estimate: DistillPlan['estimate'] = null;
    if (reason === null) {
      const bucket = estimateBucket(bundle, questions);
      // Memory first: a step that cannot fit is not timed either (docs/distill.md "Memory before a run").
      const memory = estimateDistillMemory(bundle.manifest, bucket);
      const free = this.freeMemory();
      reason = memoryRefusal(memory, free);
      if (reason === null) {
        const key = `${bundle.dir}:${bucketKey(bucket)}`;
        let seconds = this.stepSeconds.get(key);
        if (!seconds) {
          seconds = this.timeStep(bundle, bucket);
          this.stepSeconds.set(key, seconds);
          seconds.catch(() => this.stepSeconds.delete(key));
        }
        estimate = {
          bucket: { batch: bucket.batch, length: bucket.length },
          secondsPerStep: await seconds,
          memoryBytes: memory.bytes,
          freeMemoryBytes: free,
        };
      }
    }
    return {
      skill: who,
      bundle: { id: bundle.manifest.id },
      available: reason === null,
      reason,
      questions,
      questionsError,
      practice: {
        tried: [...practice.sources],
        tests: practice.tests,
        heldOutTests: practice.heldOut,
        writer: this.writer ? (this.writer.endpoint() ? 'endpoint' : 'engine') : null,
        advice: practice.tests === 0 ? ADVICE : null,
      },
      defaultSteps: recipeOf(bundle.manifest).steps,
      estimate,
      distilled: latest ? summaryOf(latest) : null,
    };
  }

  /** The version's practice: its tests split (1 in 4 held out, seeded), the sources it tries, and its
   *  questions with `written` (self-written requests) among them, at most `limit`: the bundle recipe's
   *  `questions`, the eval's count (docs/distill.md "Practice"); throws naming each source tried. */
  practice(ref: DistillInput['skill'] | ResolvedSkill, seed = 0, limit = FILE_RECIPE.questions) {
    const skill = this.factory.skill(ref);
    const tests = this.tests
      .get(skill.name, skill.version.version)
      .tests.map((t) => ({ id: t.id, prompt: t.prompt, messages: t.messages }));
    const { practised, heldOut } = splitTests(tests, seed);
    const sources: PracticeSource[] = STUDIO_SOURCES.filter((s) => s !== 'self_written' || this.writer !== null);
    const doc = { name: skill.name, description: skill.description.replace(/\s+/g, ' ').trim(), text: skill.content };
    return {
      sources,
      tests: tests.length,
      practised: practised.map((t) => t.id),
      heldOut: heldOut.map((t) => t.id),
      /** The practised tests that `questions` asks: the limit or the panel may leave some out. */
      practisedIn: (questions: readonly PracticeQuestion[]) => practisedTests(practised, questions),
      questions: (written: readonly string[] = []): PracticeQuestion[] => {
        try {
          return gather({ skill: doc, sources, tests: practised, written, seed, limit }).questions;
        } catch (err) {
          const why = (err as Error).message;
          throw new StudioError(
            'invalid_input',
            sources.includes('self_written') ? why : `${why}; self_written (no writer)`,
          );
        }
      },
    };
  }

  async run(
    input: DistillInput,
    ctx: { emit(e: DistillProgressEvent): void; signal: AbortSignal },
  ): Promise<DistillResultSchema> {
    const at = await this.factory.site(input.skill);
    const { bundle, skill } = at;
    const who = { name: skill.name, version: skill.version.version };
    const refused = trainStepRefusal(bundle);
    if (refused) throw new StudioError('invalid_input', refused);
    const seed = input.seed ?? 0;
    const { questions, record } = await this.practise(input, at, seed, ctx.signal);
    const from = input.from ?? (bundle.manifest.hypernet ? 'instant' : 'zero');
    const steps = input.steps ?? recipeOf(bundle.manifest).steps;
    const lr = input.lr ?? recipeOf(bundle.manifest).lr;
    const p = await this.factory.make(
      at,
      {
        cancelled: CANCELLED,
        make: async () => {
          const instant = from === 'instant' ? await this.compiler.compileAdapter(at, { signal: ctx.signal }) : null;
          const res = await this.distill(bundle, `${bundle.dir}:${who.name}@${who.version}`, skill.content, questions, {
            steps,
            lr,
            seed,
            init: instant?.engine ?? null,
            roundTrip: record.tried.includes('round_trip'),
            signal: ctx.signal,
            onProgress: (e) => ctx.emit({ skill: who, ...e }),
          });
          return {
            adapter: { rank: res.adapter.rank, alpha: res.adapter.rank, targets: res.adapter.targets },
            engine: res.adapter,
            recipe: {
              kind: 'distill',
              from,
              steps,
              lr,
              seed,
              // With the follow-ups the teacher pass added (round_trip): what the adapter practised on.
              questions: sourceCounts([...questions, ...(res.added ?? [])]),
              finalLoss: res.losses.at(-1)!,
              seconds: Math.round(res.seconds * 1000) / 1000,
              practice: record,
            },
            lineage: instant ? [{ rowId: instant.row.rowId, weight: 1 }] : [],
            extra: res,
          };
        },
      },
      ctx.signal,
    );
    const res = p.made!.extra!;
    const practised = [...questions, ...(res.added ?? [])];
    return {
      adapter: p.summary,
      rank: p.adapter.rank,
      skill: who,
      steps,
      losses: res.losses,
      seconds: res.seconds,
      teacherSeconds: res.teacherSeconds,
      questions: practised.map((q) => ({ question: q.question, source: q.source })),
      practice: record,
    };
  }

  /** A run's practice questions and their record: refused before the self-written requests, the instant
   *  compile and the teacher pass when the steps cannot fit (self-written requests are short: the practice
   *  without them sizes the bucket). */
  private async practise(input: DistillInput, { bundle, skill }: CurrentSite, seed: number, signal: AbortSignal) {
    const practice = this.practice(skill, seed, recipeOf(bundle.manifest).questions);
    const why = memoryRefusal(
      estimateDistillMemory(bundle.manifest, estimateBucket(bundle, input.questions ?? practice.questions([]))),
      this.freeMemory(),
    );
    if (why) throw new StudioError('invalid_input', why);
    const written: Written =
      this.writer && (input.selfWritten ?? !input.questions)
        ? await this.writer.write(bundle, skill.content, signal)
        : { written: [], dropped: { empty: 0, duplicate: 0, copy: 0 }, writer: null, warnings: [] };
    if (signal.aborted) throw new StudioError('cancelled', CANCELLED);
    const questions = input.questions
      ? withWritten(input.questions, written.written)
      : practice.questions(written.written);
    const record: PracticeRecord = {
      tried: [...practice.sources],
      // The tests the questions ask: one past the limit or removed in the panel was not practised.
      practisedTests: practice.practisedIn(questions),
      heldOutTests: practice.heldOut,
      writer: written.writer,
      dropped: written.dropped,
      warnings: written.warnings,
    };
    return { questions, record };
  }

  /** adapters.merge's `rehearse`: each source's skill version with its practice (at most its bundle
   *  recipe's `questions`), one part per source; refused naming the first source that comes from no
   *  skill version. */
  rehearsalParts(sources: readonly StoredAdapter[]): DistillPart[] {
    return sources.map((row) => {
      if (row.skill === null) {
        throw new StudioError(
          'invalid_input',
          `rehearse: adapter ${shortId(row.key)} comes from no skill version (an import, a merge or a global version); rehearsal practises each source's skill`,
        );
      }
      const skill = this.factory.skill({ name: row.skill.name, version: row.skill.version });
      const manifest = this.repo.bundleRecord(row.bundle.rowId)?.manifest as BundleManifest | undefined;
      return { skill: skill.content, questions: this.practice(skill, 0, recipeOf(manifest).questions).questions() };
    });
  }

  /** Several skills distilled into one adapter from `init` (each part's practice answered with its own
   *  text in context), in the worker; nothing is stored: a continual run rehearses its lessons into the
   *  global adapter with it and appends the result as a global version. */
  async rehearse(
    input: { parts: readonly DistillPart[]; init: EngineAdapter | null; steps: number; seed: number },
    signal: AbortSignal,
    onProgress?: DistillOptions['onProgress'],
  ): Promise<DistillResult> {
    const { bundle } = await this.bundles.current();
    const refused = trainStepRefusal(bundle);
    if (refused) throw new StudioError('invalid_input', `rehearse: ${refused}`);
    const res = await this.distillMany(bundle, `${bundle.dir}:rehearsal`, input.parts, {
      steps: input.steps,
      seed: input.seed,
      init: input.init,
      roundTrip: STUDIO_SOURCES.includes('round_trip'),
      signal,
      onProgress,
    });
    if (signal.aborted) throw new StudioError('cancelled', 'rehearsal cancelled; nothing was stored');
    return res;
  }
}

/** The panel's list with the self-written requests added (those it already holds once). */
function withWritten(questions: readonly PracticeQuestion[], written: readonly string[]): PracticeQuestion[] {
  const have = new Set(questions.map((q) => q.question));
  return [
    ...questions,
    ...written.filter((q) => !have.has(q)).map((question) => ({ question, source: 'self_written' as const })),
  ];
}

/** Why this bundle cannot distil (it has no train-step graph), else null. */
function trainStepRefusal(bundle: BundleInfo): string | null {
  try {
    trainStepEntry(bundle.manifest);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
