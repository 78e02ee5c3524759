// One continual run (issue 13 items 4-5): for each episode, the world's demo tasks are solved by
// its verified reference answers (the 5 M base passes no SkillWorld task itself, docs/results.md),
// kept as trajectories, summarised into a lesson, saved as a skill version (provenance `lesson`),
// compiled with the loaded bundle and absorbed by the mode; then the held-out tasks of every lesson
// so far are measured. Each write is its own transaction, so a cancel keeps finished episodes whole.
import { randomBytes } from 'node:crypto';
import type {
  ContinualEpisode,
  ContinualEvent,
  ContinualRunInput,
  ContinualRunResult,
} from '../../common/api/continual-schemas';
import { StudioError } from '../../common/errors';
import { checkExpect } from '../../common/verify/expect';
import type { AdapterCache } from '../api/services/adapter-cache';
import type { AdapterService } from '../api/services/adapter-service';
import type { BundleRegistry } from '../api/services/bundle-registry';
import type { CompileService } from '../api/services/compile-service';
import type { TrajectoryService } from '../api/services/trajectory-service';
import type { Adapter } from '../adapters/types';
import { bodyHash } from '../skills/normalize';
import { parseSkillMd } from '../skills/parse';
import type { AdaptersRepo } from '../store/adapters-repo';
import type { SkillsRepo } from '../store/skills-repo';
import { modeRow, type GlobalOps, type Lesson } from './absorb';
import { measure, type Condition } from './measure';
import { lessonName, type LessonInput } from './summarise';
import { DEFAULT_SUITE_DIR, loadWorlds, planEpisodes, type SuiteTask } from './suite';

export const CONTINUAL_DEFAULTS = { seed: 0, beta: 0.1, rankBudget: 16, demos: 4, tasks: 4, maxTokens: 48 };

export interface Summariser {
  /** 'template', or the model that wrote the lesson. */
  readonly name: string;
  lesson(input: LessonInput, signal: AbortSignal): Promise<string>;
}

export interface ContinualDeps {
  bundles: Pick<BundleRegistry, 'current'>;
  skills: Pick<SkillsRepo, 'save'>;
  compiler: Pick<CompileService, 'compileAdapter'>;
  adapters: Pick<AdapterService, 'emaUpdate'>;
  repo: Pick<AdaptersRepo, 'load' | 'globalHead' | 'appendEma' | 'get'>;
  cache: Pick<AdapterCache, 'get'>;
  trajectories: Pick<TrajectoryService, 'record'>;
  summariser: Summariser;
  /** Used when `summariser` fails (the LLM's endpoint is down): the run goes on, with a warning. */
  fallback?: Summariser;
}

const short = (key: string) => key.slice(0, 12);

export async function runContinual(
  input: ContinualRunInput,
  deps: ContinualDeps,
  ctx: { emit(e: ContinualEvent): void; signal: AbortSignal },
): Promise<ContinualRunResult> {
  const t0 = performance.now();
  const s = { ...CONTINUAL_DEFAULTS, ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) };
  const cancelled = () => {
    if (ctx.signal.aborted) throw new StudioError('cancelled', 'continual run cancelled');
  };
  const plan = planEpisodes(loadWorlds(input.world ?? DEFAULT_SUITE_DIR), {
    episodes: input.episodes,
    seed: s.seed,
    demos: s.demos,
    heldOut: s.tasks,
  });
  const { bundle, sha256, rowId: bundleId } = await deps.bundles.current();
  const bundleRef = { id: bundle.manifest.id, sha256 };
  const run = randomBytes(6).toString('hex');
  const row = modeRow(input.mode);
  const loaded = new Map<number, Adapter>();
  const ops: GlobalOps = {
    ema: (lesson) =>
      deps.adapters.emaUpdate({ adapterId: lesson.key, beta: s.beta, rankBudget: s.rankBudget }).version.version,
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

  const lessons: Lesson[] = [];
  const heldOut: SuiteTask[] = [];
  const episodes: ContinualEpisode[] = [];
  let summariserUsed = deps.summariser.name;
  for (const ep of plan) {
    cancelled();
    const te = performance.now();
    ctx.emit({ type: 'episode', episode: ep.episode, episodes: plan.length, world: ep.world.name });

    // The episode's work: each demo answered with its reference, judged by the task's checker.
    const solved = ep.demos.map((t) => ({
      task: t,
      messages: [...t.messages, { role: 'assistant' as const, content: t.reference }],
      outcome: checkExpect(t.checker, t.reference),
    }));
    const stored = deps.trajectories.record(
      solved.map((d) => ({
        source: 'synth' as const,
        bundle: bundleRef,
        sampling: {},
        messages: d.messages,
        verdict: { passed: d.outcome.passed, ...(d.outcome.reason !== null && { reason: d.outcome.reason }) },
        details: { continual: { run, episode: ep.episode, world: ep.world.name, task: d.task.id } },
      })),
    );
    const passed = solved.filter((d) => d.outcome.passed);

    let lesson: Lesson | null = null;
    if (passed.length > 0) {
      const lessonInput = { world: ep.world.name, episode: ep.episode, trajectories: passed };
      let text: string;
      let by = deps.summariser.name;
      try {
        text = await deps.summariser.lesson(lessonInput, ctx.signal);
      } catch (err) {
        cancelled();
        if (!deps.fallback) throw err;
        ctx.emit({
          type: 'warning',
          episode: ep.episode,
          message: `${deps.summariser.name} failed (${(err as Error).message}); the ${deps.fallback.name} summariser wrote this lesson`,
        });
        by = deps.fallback.name;
        summariserUsed = `${deps.summariser.name}, ${by} after a failure`;
        text = await deps.fallback.lesson(lessonInput, ctx.signal);
      }
      cancelled();
      lesson = await addLesson(deps, ep.episode, ep.world.name, text, {
        kind: 'lesson',
        run,
        episode: ep.episode,
        world: ep.world.name,
        trajectories: stored.map((t) => t.id),
        summariser: by,
      });
      lessons.push(lesson);
      heldOut.push(...ep.heldOut);
      ctx.emit({
        type: 'lesson',
        episode: ep.episode,
        skill: { name: lesson.name, version: lesson.version },
        adapter: short(lesson.key),
        summariser: by,
      });
    }
    cancelled();

    const globalVersion = lesson
      ? row.absorb(ops, lessons)
      : row.answerer === 'global'
        ? (deps.repo.globalHead(bundleId)?.n ?? null)
        : null;
    let cond: Condition = { adapter: null, system: null };
    let adapterId: string | null = null;
    if (row.answerer === 'global' && globalVersion !== null) {
      const head = deps.repo.globalHead(bundleId)!;
      cond = {
        adapter: deps.cache.get(
          { rowId: head.adapterRowId, tensorsSha256: head.adapterTensorsSha256 },
          bundle.manifest,
        ),
        system: null,
      };
      adapterId = short(head.adapterKey);
    } else if (row.answerer === 'newest' && lessons.length) {
      const l = lessons.at(-1)!;
      cond = { adapter: deps.cache.get(l, bundle.manifest), system: null };
      adapterId = short(l.key);
    } else if (row.answerer === 'text' && lessons.length) {
      cond = { adapter: null, system: lessons.map((l) => l.text.trim()).join('\n\n') };
    }
    ctx.emit({ type: 'measure', episode: ep.episode, tasks: heldOut.length });
    const m = await measure(bundle, heldOut, cond, { maxTokens: s.maxTokens, signal: ctx.signal });
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
      adapter: adapterId,
      passedTasks: m.results.filter((x) => x.passed).map((x) => x.id),
      truncated: m.truncated,
      ms: performance.now() - te,
    });
  }
  return {
    run,
    mode: input.mode,
    suite: 'skillworld',
    seed: s.seed,
    bundle: bundleRef,
    settings: {
      beta: s.beta,
      rankBudget: s.rankBudget,
      demos: s.demos,
      tasks: s.tasks,
      maxTokens: s.maxTokens,
      summariser: summariserUsed,
    },
    episodes,
    finalPassRate: episodes.at(-1)?.passRate ?? 0,
    ms: performance.now() - t0,
  };
}

/** Saves the lesson as the next version of `lesson-<world>` (the same text: the same version) and compiles it. */
async function addLesson(
  deps: ContinualDeps,
  episode: number,
  world: string,
  text: string,
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
  const compiled = await deps.compiler.compileAdapter({ name, version: version.version });
  return {
    episode,
    name,
    version: version.version,
    text,
    rowId: compiled.row.rowId,
    key: compiled.row.key,
    tensorsSha256: compiled.row.tensorsSha256,
  };
}
