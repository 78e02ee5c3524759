// One continual run: for each episode, the world's demo tasks are solved by
// its verified reference answers (the 5 M base passes no SkillWorld task itself, docs/results.md),
// kept as trajectories, summarised into a lesson, saved as a skill version (provenance `lesson`),
// compiled with the loaded bundle (distilled by default: docs/distill.md, practising on the episode's
// tasks with the verifier's passing answers as forced targets; or instant) and absorbed by the mode;
// then the held-out tasks of every lesson so far are measured. Everything is written to the run's
// workspace (main/api/services/run-workspace.ts), never to the Library. The run and its episodes are stored (main/store/continual-repo.ts): a run that
// was killed or cancelled goes on from its rows, and no lesson is absorbed or measured twice.
import type { ContinualEpisode, ContinualEvent, ContinualRunResult } from '../../common/api/continual-schemas';
import type { TrajectoryMessage } from '../../common/api/trajectory-schemas';
import type { AdapterRecipe } from '../../common/api/adapter-schemas';
import { StudioError } from '../../common/errors';
import { checkExpect } from '../../common/verify/expect';
import { textPractice as practiceOf, type PracticeQuestion } from '../../common/distill/practice';
import type { MergeJob } from '../adapters/algebra-ops';
import type { Adapter } from '../adapters/types';
import { foldAdapter, type BundleInfo, type EngineAdapter } from '../engine';
import type { BundleManifest } from '../engine/manifest';
import { bodyHash } from '../skills/normalize';
import { parseSkillMd } from '../skills/parse';
import type { AdaptersRepo } from '../store/adapters-repo';
import type { ContinualRepo, Measurement, StoredContinualRun } from '../store/continual-repo';
import type { SkillsRepo } from '../store/skills-repo';
import { modeRow, type Answerer, type GlobalOps, type Lesson, type ModeRow } from './absorb';
import { measure, type Condition } from './measure';
import { lessonPractice } from './practice';
import { lessonName, type LessonInput } from './summarise';
import { DEFAULT_SUITE_DIR, loadWorlds, planEpisodes, type Episode, type SuiteTask } from './suite';

export const CONTINUAL_DEFAULTS = {
  seed: 0,
  beta: 0.1,
  rankBudget: 16,
  demos: 4,
  tasks: 4,
  maxTokens: 48,
  tier: 'distilled' as 'distilled' | 'instant',
  // Measured on the continual suite (docs/results.md "Stage 3 on distilled lessons"): 40 steps overfit a
  // lesson's few rows; variants and rehearsal let the merged global adapter keep its lessons.
  steps: 10,
  rehearse: 40,
  variants: 3,
};

export interface Summariser {
  /** 'template', or the model that wrote the lesson. */
  readonly name: string;
  lesson(input: LessonInput, signal: AbortSignal): Promise<string>;
}

type SkillRef = { name: string; version: number };
/** The EMA step's adapter after rehearsal, and how it was rehearsed (the global version's recipe). */
type Rehearsed = {
  adapter: Adapter;
  rehearsal: NonNullable<Extract<AdapterRecipe, { kind: 'ema' }>['rehearsal']>;
};
type LessonRow = Pick<Lesson, 'rowId' | 'key' | 'tensorsSha256'>;

/** A demo's answer as kept: the studio's TrajectoryService.record takes these. */
interface DemoTrajectory {
  source: 'synth';
  bundle: { id: string; sha256: string };
  sampling: Record<string, never>;
  messages: TrajectoryMessage[];
  verdict: { passed: boolean; reason?: string };
  details: Record<string, unknown>;
}

// What the loop needs from the studio's services, declared here so that continual/ stays below api/
// (the services satisfy these by their shape; a run's workspace builds them over its own database).
export interface ContinualDeps {
  bundles: { current(): Promise<{ bundle: BundleInfo; sha256: string; rowId: number }> };
  skills: Pick<SkillsRepo, 'save'>;
  compiler: {
    compileAdapter(ref: SkillRef, ctx: { signal: AbortSignal }): Promise<{ row: LessonRow }>;
    skill(ref: SkillRef): { content: string };
  };
  distiller: {
    run(
      input: { skill: SkillRef; questions: PracticeQuestion[]; steps: number; seed: number },
      ctx: { emit(e: unknown): void; signal: AbortSignal },
    ): Promise<{ adapter: { key: string } }>;
    latestDistilled(ref: SkillRef, bundleRowId: number): LessonRow | null;
    /** Every part distilled into one adapter from `init`; nothing stored. */
    rehearse(
      input: {
        parts: { skill: string; questions: readonly PracticeQuestion[] }[];
        init: EngineAdapter;
        steps: number;
        seed: number;
      },
      signal: AbortSignal,
    ): Promise<{ adapter: EngineAdapter; losses: number[]; seconds: number }>;
  };
  adapters: {
    emaStepOffThread(input: { adapterId: string; beta: number; rankBudget: number }): Promise<{
      adapter: Adapter;
      write(rehearsed?: Rehearsed): { version: { version: number } };
    }>;
    /** A merge over copies of the adapters (the caller keeps them). */
    mergeCopies(job: MergeJob): Promise<Adapter>;
  };
  repo: Pick<AdaptersRepo, 'load' | 'globalHead' | 'globalHistory' | 'appendEma' | 'get' | 'findByKey'>;
  cache: { get(row: { rowId: number; tensorsSha256: string }, manifest: BundleManifest): EngineAdapter };
  trajectories: { record(rows: readonly DemoTrajectory[]): { id: string }[] };
  store: Pick<ContinualRepo, 'episodes' | 'absorb' | 'measured'>;
  summariser: Summariser;
  /** Used when `summariser` fails (the LLM's endpoint is down): the run goes on, with a warning. */
  fallback?: Summariser;
}

const short = (key: string) => key.slice(0, 12);

function cancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new StudioError('cancelled', 'continual run cancelled');
}

type Settings = typeof CONTINUAL_DEFAULTS;
type Ctx = { emit(e: ContinualEvent): void; signal: AbortSignal };

/** What every episode of a run shares. */
interface RunEnv {
  deps: ContinualDeps;
  run: StoredContinualRun;
  s: Settings;
  tier: Tier;
  bundle: BundleInfo;
  bundleRef: { id: string; sha256: string };
  bundleId: number;
  row: ModeRow;
  ops: GlobalOps;
  ctx: Ctx;
}

export async function runContinual(
  run: StoredContinualRun,
  deps: ContinualDeps,
  ctx: Ctx & { resumed?: boolean },
): Promise<ContinualRunResult> {
  const t0 = performance.now();
  const input = run.input;
  const { env, plan } = await openRun(run, deps, ctx);
  const { s, tier, bundleRef } = env;

  // What a killed or cancelled run stored: absorbed episodes are not absorbed again, measured ones not measured.
  const stored = new Map(deps.store.episodes(run).map((e) => [e.episode, e]));
  ctx.emit({
    type: 'run',
    run: run.id,
    resumed: ctx.resumed ?? false,
    done: [...stored.values()].filter((e) => e.measured).length,
  });
  const lessons: Lesson[] = [];
  const heldOut: SuiteTask[] = [];
  const episodes: ContinualEpisode[] = [];
  const writers = new Set<string>();
  for (const ep of plan) {
    cancelled(ctx.signal);
    const te = performance.now();
    const before = stored.get(ep.episode);
    let lesson: Lesson | null = null;
    let globalVersion: number | null;
    if (before) {
      if (before.lesson) {
        lesson = await storedLesson(deps, ep, before.lesson, tier, ctx.signal);
        writers.add(before.lesson.summariser);
      }
      globalVersion = before.globalVersion;
    } else {
      ctx.emit({ type: 'episode', episode: ep.episode, episodes: plan.length, world: ep.world.name });
      const made = await absorbEpisode(env, ep, lessons);
      if (made.by) writers.add(made.by);
      ({ lesson, globalVersion } = made);
    }
    if (lesson) {
      lessons.push(lesson);
      heldOut.push(...ep.heldOut);
    }
    cancelled(ctx.signal);

    const m = before?.measured ?? (await measureEpisode(env, ep.episode, lessons, heldOut, globalVersion, te));
    const passRate = m.n ? m.passed / m.n : 0;
    ctx.emit({ type: 'measured', episode: ep.episode, passRate, globalVersion });
    episodes.push({
      episode: ep.episode,
      world: ep.world.name,
      lesson: lesson && { name: lesson.name, version: lesson.version },
      passRate,
      passed: m.passed,
      n: m.n,
      globalVersion,
      adapter: m.adapter,
      passedTasks: m.passedTasks,
      truncated: m.truncated,
      ms: m.ms,
    });
  }
  return {
    run: run.id,
    mode: input.mode,
    suite: 'skillworld',
    seed: s.seed,
    bundle: bundleRef,
    settings: settingsOf(s, input.mode, deps.summariser.name, writers),
    episodes,
    finalPassRate: episodes.at(-1)?.passRate ?? 0,
    ms: performance.now() - t0,
  };
}

/** The run's settings (its input over CONTINUAL_DEFAULTS), its episodes' plan, and what they share. */
async function openRun(
  run: StoredContinualRun,
  deps: ContinualDeps,
  ctx: Ctx,
): Promise<{ env: RunEnv; plan: Episode[] }> {
  const input = run.input;
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const s: Settings = { ...CONTINUAL_DEFAULTS, ...given };
  const plan = planEpisodes(loadWorlds(input.world ?? DEFAULT_SUITE_DIR), {
    episodes: input.episodes,
    seed: s.seed,
    demos: s.demos,
    heldOut: s.tasks,
  });
  const { bundle, sha256, rowId: bundleId } = await deps.bundles.current();
  const bundleRef = { id: bundle.manifest.id, sha256 };
  const tier: Tier = { tier: s.tier, steps: s.steps, seed: s.seed, bundleRowId: bundleId, variants: s.variants };
  const ops = globalOps(deps, s, tier, bundleId, ctx.signal);
  return { env: { deps, run, s, tier, bundle, bundleRef, bundleId, row: modeRow(input.mode), ops, ctx }, plan };
}

/** The run's settings as its result reports them; the summariser names those that wrote after a failure. */
function settingsOf(s: Settings, mode: StoredContinualRun['mode'], summariser: string, writers: Set<string>) {
  const others = [...writers].filter((w) => w !== summariser);
  return {
    beta: s.beta,
    rankBudget: s.rankBudget,
    demos: s.demos,
    tasks: s.tasks,
    maxTokens: s.maxTokens,
    tier: s.tier,
    steps: s.tier === 'distilled' ? s.steps : null,
    rehearse: mode === 'merge' && s.tier === 'distilled' ? s.rehearse : 0,
    variants: s.tier === 'distilled' ? s.variants : 0,
    summariser: others.length ? `${summariser}, ${others.join(', ')} after a failure` : summariser,
  };
}

/** How the mode's global adapter is made and kept: EMA (rehearsed on every lesson when the run asks),
 *  merge, append and the lessons' adapters, loaded once. */
function globalOps(deps: ContinualDeps, s: Settings, tier: Tier, bundleId: number, signal: AbortSignal): GlobalOps {
  const loaded = new Map<number, Adapter>();
  return {
    ema: async (lessons) => {
      const step = await deps.adapters.emaStepOffThread({
        adapterId: lessons.at(-1)!.key,
        beta: s.beta,
        rankBudget: s.rankBudget,
      });
      if (!s.rehearse || tier.tier !== 'distilled') return () => step.write().version.version;
      const rehearsed = await deps.distiller.rehearse(
        {
          parts: lessons.map((l) => ({ skill: l.text, questions: l.practice })),
          init: foldAdapter(step.adapter),
          steps: s.rehearse,
          seed: s.seed + lessons.length,
        },
        signal,
      );
      const { adapter: a, losses, seconds } = rehearsed;
      const rehearsal = { steps: s.rehearse, lessons: lessons.map((l) => l.key), finalLoss: losses.at(-1)!, seconds };
      return () =>
        step.write({ adapter: { rank: a.rank, alpha: a.rank, targets: a.targets }, rehearsal }).version.version;
    },
    merge: (job) => deps.adapters.mergeCopies(job),
    append: (adapter, recipe, lessons, beta) => {
      const head = deps.repo.globalHead(bundleId);
      const lineage = lessons.map((l) => ({ rowId: l.rowId, weight: beta }));
      return deps.repo.appendEma(bundleId, { bundleId, adapter, recipe, lineage }, beta, head?.n ?? null).version.n;
    },
    load: (lesson) => {
      let a = loaded.get(lesson.rowId);
      if (!a) loaded.set(lesson.rowId, (a = deps.repo.load(lesson.rowId)));
      return a;
    },
  };
}

/** A new episode: its lesson learnt (none when no demo passed) and absorbed by the mode. The algebra runs
 *  in the worker first; its append and the episode row land in one transaction. */
async function absorbEpisode(
  { deps, run, bundleRef, bundleId, tier, row, ops, ctx }: RunEnv,
  ep: Episode,
  lessons: readonly Lesson[],
): Promise<{ lesson: Lesson | null; by: string | null; globalVersion: number | null }> {
  const made = await learn(deps, run.id, ep, bundleRef, tier, ctx);
  cancelled(ctx.signal);
  const lesson = made?.lesson ?? null;
  if (made)
    ctx.emit({
      type: 'lesson',
      episode: ep.episode,
      skill: { name: made.lesson.name, version: made.lesson.version },
      adapter: short(made.lesson.key),
      summariser: made.by,
    });
  const lessonRef = made && { name: made.lesson.name, version: made.lesson.version, summariser: made.by };
  const write = lesson ? await row.absorb(ops, [...lessons, lesson]) : null;
  const globalVersion = deps.store.absorb(run, { episode: ep.episode, world: ep.world.name, lesson: lessonRef }, () =>
    lesson ? (write?.() ?? null) : row.answerer === 'global' ? (deps.repo.globalHead(bundleId)?.n ?? null) : null,
  );
  return { lesson, by: made?.by ?? null, globalVersion };
}

/** The held-out tasks of every lesson so far, answered the mode's way, and stored; a measurement cut
 *  short by cancel is not stored. */
async function measureEpisode(
  { deps, run, s, bundle, bundleId, row, ctx }: RunEnv,
  episode: number,
  lessons: readonly Lesson[],
  heldOut: readonly SuiteTask[],
  globalVersion: number | null,
  since: number,
): Promise<Measurement> {
  const answer = answerer(deps, row.answerer, lessons, globalVersion, bundleId, bundle.manifest);
  ctx.emit({ type: 'measure', episode, tasks: heldOut.length });
  const got = await measure(bundle, heldOut, answer.cond, { maxTokens: s.maxTokens, signal: ctx.signal });
  cancelled(ctx.signal);
  const m = {
    passed: got.passed,
    n: got.n,
    adapter: answer.adapter,
    passedTasks: got.results.filter((x) => x.passed).map((x) => x.id),
    truncated: got.truncated,
    ms: performance.now() - since,
  };
  deps.store.measured(run, episode, m);
  return m;
}

/** The episode's work: each demo answered with its reference, judged by the task's checker, kept as
 *  trajectories; the passing ones summarised into a lesson, saved and compiled. null: none passed. */
async function learn(
  deps: ContinualDeps,
  run: string,
  ep: Episode,
  bundle: { id: string; sha256: string },
  tier: Tier,
  ctx: Ctx,
): Promise<{ lesson: Lesson; by: string } | null> {
  const solved = ep.demos.map((t) => ({
    task: t,
    messages: [...t.messages, { role: 'assistant' as const, content: t.reference }],
    outcome: checkExpect(t.checker, t.reference),
  }));
  const stored = deps.trajectories.record(
    solved.map((d) => ({
      source: 'synth' as const,
      bundle,
      sampling: {},
      messages: d.messages,
      verdict: { passed: d.outcome.passed, ...(d.outcome.reason !== null && { reason: d.outcome.reason }) },
      details: { continual: { run, episode: ep.episode, world: ep.world.name, task: d.task.id } },
    })),
  );
  const passed = solved.filter((d) => d.outcome.passed);
  if (!passed.length) return null;
  const lessonInput = { world: ep.world.name, episode: ep.episode, trajectories: passed };
  let text: string;
  let by = deps.summariser.name;
  try {
    text = await deps.summariser.lesson(lessonInput, ctx.signal);
  } catch (err) {
    cancelled(ctx.signal);
    if (!deps.fallback) throw err;
    ctx.emit({
      type: 'warning',
      episode: ep.episode,
      message: `${deps.summariser.name} failed (${(err as Error).message}); the ${deps.fallback.name} summariser wrote this lesson`,
    });
    by = deps.fallback.name;
    text = await deps.fallback.lesson(lessonInput, ctx.signal);
  }
  cancelled(ctx.signal);
  const lesson = await addLesson(
    deps,
    ep.episode,
    ep.world.name,
    text,
    tier,
    lessonPractice(passed, { variants: tier.variants, seed: tier.seed * 1000 + ep.episode }),
    ctx.signal,
    {
      kind: 'lesson',
      run,
      episode: ep.episode,
      world: ep.world.name,
      trajectories: stored.map((t) => t.id),
      summariser: by,
    },
  );
  return { lesson, by };
}

/** What answers the held-out tasks after an episode: the global version it made, the newest lesson's
 *  adapter, or every lesson's text as the system message. */
function answerer(
  deps: ContinualDeps,
  kind: Answerer,
  lessons: readonly Lesson[],
  globalVersion: number | null,
  bundleId: number,
  manifest: BundleManifest,
): { cond: Condition; adapter: string | null } {
  if (kind === 'global' && globalVersion !== null) {
    const v = deps.repo.globalHistory(bundleId).find((g) => g.n === globalVersion);
    if (!v) throw new StudioError('not_found', `global adapter version ${globalVersion} is not stored`);
    const ref = { rowId: v.adapterRowId, tensorsSha256: v.adapterTensorsSha256 };
    return { cond: { adapter: deps.cache.get(ref, manifest), system: null }, adapter: short(v.adapterKey) };
  }
  if (kind === 'newest' && lessons.length) {
    const l = lessons.at(-1)!;
    return { cond: { adapter: deps.cache.get(l, manifest), system: null }, adapter: short(l.key) };
  }
  if (kind === 'text' && lessons.length)
    return { cond: { adapter: null, system: lessons.map((l) => l.text.trim()).join('\n\n') }, adapter: null };
  return { cond: { adapter: null, system: null }, adapter: null };
}

/** How lessons are compiled: the tier, and for distilled the steps and seed. */
interface Tier {
  tier: 'distilled' | 'instant';
  steps: number;
  seed: number;
  bundleRowId: number;
  /** Forced practice variants per demo, numbers redrawn (practice.ts). */
  variants: number;
}

/** The lesson version compiled by the run's tier; `practice` empty: the lesson's own Examples and sections. */
async function compileLesson(
  deps: ContinualDeps,
  ref: { name: string; version: number },
  text: string,
  tier: Tier,
  practice: readonly PracticeQuestion[],
  signal: AbortSignal,
): Promise<LessonRow> {
  if (tier.tier === 'instant') return (await deps.compiler.compileAdapter(ref, { signal })).row;
  const questions = practice.length ? [...practice] : textPractice(ref.name, text);
  const res = await deps.distiller.run(
    { skill: ref, questions, steps: tier.steps, seed: tier.seed },
    { emit: () => {}, signal },
  );
  const row = deps.repo.findByKey(res.adapter.key);
  if (!row) throw new StudioError('not_found', `the distilled adapter of ${ref.name}@${ref.version} was not stored`);
  return row;
}

/** A stored episode's lesson: its skill version's text and adapter (found, or compiled again when the run
 *  was killed between storing the episode and its adapter). */
async function storedLesson(
  deps: ContinualDeps,
  ep: Episode,
  ref: { name: string; version: number },
  tier: Tier,
  signal: AbortSignal,
): Promise<Lesson> {
  const text = deps.compiler.skill(ref).content;
  const found = tier.tier === 'distilled' ? deps.distiller.latestDistilled(ref, tier.bundleRowId) : null;
  // The demos are answered by their references, so the same ones pass again.
  const passed = ep.demos.filter((t) => checkExpect(t.checker, t.reference).passed).map((task) => ({ task }));
  const practice = lessonPractice(passed, { variants: tier.variants, seed: tier.seed * 1000 + ep.episode });
  const row = found ?? (await compileLesson(deps, ref, text, tier, practice, signal));
  return {
    episode: ep.episode,
    ...ref,
    text,
    rowId: row.rowId,
    key: row.key,
    tensorsSha256: row.tensorsSha256,
    practice: practice.length ? practice : textPractice(ref.name, text),
  };
}

/** Saves the lesson as the next version of `lesson-<world>` (the same text: the same version) and compiles it. */
async function addLesson(
  deps: ContinualDeps,
  episode: number,
  world: string,
  text: string,
  tier: Tier,
  practice: readonly PracticeQuestion[],
  signal: AbortSignal,
  provenance: Parameters<SkillsRepo['save']>[3],
): Promise<Lesson> {
  const parsed = parseSkillMd(text);
  const error = parsed.diagnostics.find((d) => d.severity === 'error');
  if (error)
    throw new StudioError('bad_skill', `the lesson of episode ${episode}: line ${error.line}: ${error.message}`);
  const name = lessonName(world);
  const { version } = deps.skills.save(
    name,
    text,
    parsed.frontmatter.description ?? '',
    provenance,
    bodyHash(parsed.body),
  );
  const ref = { name, version: version.version };
  const row = await compileLesson(deps, ref, text, tier, practice, signal);
  return {
    episode,
    ...ref,
    text,
    rowId: row.rowId,
    key: row.key,
    tensorsSha256: row.tensorsSha256,
    practice: practice.length ? [...practice] : textPractice(ref.name, text),
  };
}

/** A lesson's practice from its text alone (no tests, no writer): the studio's other sources. */
function textPractice(name: string, text: string): PracticeQuestion[] {
  const description = parseSkillMd(text).frontmatter.description ?? '';
  return practiceOf({ name, description, text });
}
