// evolve.*: the text-space loop (main/evolve/) wired to the studio. Candidates are scored by verify's
// test runner with the loaded bundle, in context and compiled through the same compile path as a
// version (nothing stored for a candidate); the version a run or an accept makes is compiled and kept.
// Each candidate's test runs are kept as `evolve` trajectories when the storeTrajectories setting is on.
import type {
  EvolveAccepted,
  EvolveCandidate,
  EvolveEvent,
  EvolveGeneratorKind,
  EvolveMode,
  EvolveResult,
  EvolveRunDetail,
  EvolveRunInput,
  EvolveRunSummary,
} from '../../../common/api/evolve-schemas';
import { DEFAULT_EVOLVE_CANDIDATES, DEFAULT_EVOLVE_TOKENS } from '../../../common/api/evolve-schemas';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import type { RecordInput, TrajectoryService } from './trajectory-service';
import { StudioError } from '../../../common/errors';
import type { Generator } from '../../evolve/generator';
import { LlmGenerator } from '../../evolve/llm-generator';
import { endpointFromSettings } from '../../llm/chat-client';
import { OfflineGenerator } from '../../evolve/offline-generator';
import { runEvolve } from '../../evolve/runner';
import { runScores } from '../../evolve/summary';
import { CandidateVerifier, type Scored } from '../../evolve/verifier';
import { bodyHash } from '../../skills/normalize';
import { parseSkillMd } from '../../skills/parse';
import type { BestCompiled, EvolveRepo, StoredCandidate, StoredRun } from '../../store/evolve-repo';
import type { SettingsRepo } from '../../store/settings-repo';
import type { SkillTestsRepo } from '../../store/skill-tests-repo';
import type { SkillsRepo } from '../../store/skills-repo';
import type { BundleRegistry, CurrentBundle } from './bundle-registry';
import type { CompileService } from './compile-service';
import type { DistillService } from './distill-service';
import type { VerifyService } from './verify-service';

type Ctx = { emit(e: EvolveEvent): void; signal: AbortSignal };

function candidateDto(c: StoredCandidate): EvolveCandidate {
  return {
    id: c.rowId,
    iteration: c.iteration,
    index: c.index,
    parent: c.parent,
    operator: c.operator,
    note: c.note,
    sha256: c.sha256,
    diff: c.diff,
    score: c.score,
    scores: c.scores,
    status: c.status,
    version: c.version,
  };
}

/** A scored candidate's test runs as `evolve` trajectories: one per test and mode, linked to the run and
 *  candidate (the candidate's text is in the run's rows; the skill is the version the run started from). */
function trajectoriesOf(
  run: StoredRun,
  c: StoredCandidate,
  s: Scored,
  tests: readonly VerifierTest[],
  current: CurrentBundle,
): RecordInput[] {
  const bundle = { id: current.bundle.manifest.id, sha256: current.sha256 };
  return Object.entries(s.results ?? {}).flatMap(([mode, results]) =>
    results.map((r, i) => {
      const t = tests[i]!;
      return {
        source: 'evolve' as const,
        skill: { name: run.skill.name, version: run.skill.version },
        condition: mode as EvolveMode,
        bundle,
        sampling: { temperature: 0, maxTokens: t.maxTokens ?? run.maxTokens },
        messages: [
          ...(t.messages ?? [{ role: 'user' as const, content: t.prompt! }]),
          { role: 'assistant' as const, content: r.answer },
        ],
        verdict: { passed: r.passed, test: r.id, ...(r.reason !== null && { reason: r.reason }) },
        details: {
          evolve: {
            run: run.id,
            candidate: c.rowId,
            iteration: c.iteration,
            index: c.index,
            operator: c.operator,
            sha256: c.sha256,
          },
          finishReason: r.finishReason,
          completionTokens: r.completionTokens,
          ...(mode === 'in_context' && { truncated: r.truncated }),
        },
      };
    }),
  );
}

export class EvolveService {
  constructor(
    private readonly repo: EvolveRepo,
    private readonly skills: Pick<SkillsRepo, 'save' | 'get'>,
    private readonly compiler: Pick<CompileService, 'skill' | 'compileText' | 'compileAdapter'>,
    private readonly verify: Pick<VerifyService, 'runTests'>,
    private readonly tests: Pick<SkillTestsRepo, 'get'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    private readonly settings: Pick<SettingsRepo, 'get'>,
    private readonly trajectories: Pick<TrajectoryService, 'record'>,
    private readonly fetchFn: typeof fetch = (...args) => fetch(...args),
    /** Distils the best version when the skill uses the distilled tier (docs/distill.md). */
    private readonly distiller: Pick<DistillService, 'latestDistilled' | 'run' | 'distilledAdapter'> | null = null,
  ) {}

  /** evolve.run: a new run from a skill version. */
  async run(input: EvolveRunInput, ctx: Ctx): Promise<EvolveResult> {
    const skill = this.compiler.skill({ name: input.name, version: input.version });
    const tests = this.testsOf(skill.name, skill.version.version);
    const current = await this.bundles.current();
    const hasHypernet = current.bundle.manifest.hypernet !== undefined && current.bundle.manifest.hypernet !== null;
    const modes: EvolveMode[] = input.modes ?? (hasHypernet ? ['in_context', 'instant'] : ['in_context']);
    if (modes.includes('instant') && !hasHypernet)
      throw new StudioError(
        'invalid_input',
        `modes: bundle ${current.bundle.manifest.id} has no hypernetwork, so candidates cannot be scored compiled (use modes ["in_context"])`,
      );
    const generatorKind = input.generator ?? 'offline';
    const generator = this.generator(generatorKind); // a bad endpoint setting fails before a run is stored
    const run = this.repo.create(
      {
        versionRowId: skill.rowId,
        generator: generatorKind,
        iterations: input.iterations,
        perIteration: input.candidates ?? DEFAULT_EVOLVE_CANDIDATES,
        seed: input.seed ?? 0,
        modes: [...new Set(modes)],
        maxTokens: input.maxTokens ?? DEFAULT_EVOLVE_TOKENS,
        accept: input.accept ?? true,
        bundleSha256: current.sha256,
      },
      skill.content,
    );
    return this.drive(run, generator, tests, current, ctx, false);
  }

  /** evolve.resume: a run that stopped (killed, cancelled, failed) goes on from its stored rows. */
  async resume(input: { run: string }, ctx: Ctx): Promise<EvolveResult> {
    const run = this.repo.get(input.run);
    if (run.status === 'done') return this.result(run.id, ctx.signal);
    const current = await this.bundles.current();
    if (run.bundleSha256 !== null && run.bundleSha256 !== current.sha256)
      throw new StudioError(
        'conflict',
        `run ${run.id} was scored with another bundle (sha256 ${run.bundleSha256.slice(0, 12)}); load that bundle to resume it`,
      );
    const tests = this.testsOf(run.skill.name, run.skill.version);
    return this.drive(run, this.generator(run.generator), tests, current, ctx, true);
  }

  list(input: { name?: string }): EvolveRunSummary[] {
    return this.repo.list(input.name ?? null).map((r) => this.summary(r, this.repo.candidates(r)));
  }

  get(input: { run: string }): EvolveRunDetail {
    const run = this.repo.get(input.run);
    const candidates = this.repo.candidates(run);
    return {
      ...this.summary(run, candidates),
      iterationScores: runScores(candidates, run.iterations, run.status === 'done').iterations,
      candidates: candidates.map((c) => ({ ...candidateDto(c), content: c.content })),
    };
  }

  /** evolve.accept: the candidate becomes the skill's next version (provenance evolve), compiled. */
  async accept(input: { run: string; candidate: number }): Promise<EvolveAccepted> {
    const run = this.repo.get(input.run);
    const c = this.candidate(run, input.candidate);
    if (c.iteration === 0)
      throw new StudioError('invalid_input', `candidate ${c.rowId} is the baseline: its version exists`);
    if (c.status === 'accepted')
      throw new StudioError('conflict', `candidate ${c.rowId} is already version ${c.version}`);
    const version = this.repo.mark(run, c.rowId, 'accepted', () => this.saveVersion(run, c));
    const adapter = await this.compileVersion(run.skill.name, version!);
    return { version: this.skills.get(run.skill.name, version!)!.version, adapter };
  }

  reject(input: { run: string; candidate: number }): EvolveCandidate {
    const run = this.repo.get(input.run);
    const c = this.candidate(run, input.candidate);
    if (c.status === 'accepted')
      throw new StudioError('conflict', `candidate ${c.rowId} was accepted as version ${c.version}; it stays`);
    this.repo.mark(run, c.rowId, 'rejected');
    return candidateDto(this.candidate(run, c.rowId));
  }

  private async drive(
    run: StoredRun,
    generator: Generator,
    tests: VerifierTest[],
    current: CurrentBundle,
    ctx: Ctx,
    resumed: boolean,
  ): Promise<EvolveResult> {
    ctx.emit({ type: 'run', run: run.id, resumed, iterations: run.iterations, candidates: run.perIteration });
    const verifier = new CandidateVerifier(this.verify, this.compiler, current.bundle, tests, run.modes, run.maxTokens);
    try {
      await runEvolve(
        run,
        {
          repo: this.repo,
          generator,
          verifier,
          tests,
          saveVersion: (best) => this.saveVersion(run, best),
          record: (c, s) => this.trajectories.record(trajectoriesOf(run, c, s, tests, current)),
        },
        ctx,
      );
    } catch (err) {
      const cancelled = err instanceof StudioError && err.code === 'cancelled';
      this.repo.setStatus(run, cancelled ? 'cancelled' : 'failed', cancelled ? null : (err as Error).message);
      throw err;
    }
    return this.result(run.id, ctx.signal);
  }

  /** The finished run's scores, and its best version compiled with the skill's tier (stored once). */
  private async result(id: string, signal: AbortSignal): Promise<EvolveResult> {
    let run = this.repo.get(id);
    const candidates = this.repo.candidates(run);
    const scores = runScores(candidates, run.iterations, true);
    const version = run.resultVersion ?? run.skill.version;
    const score = run.resultVersion !== null ? scores.best!.score! : scores.baseline!.score!;
    if (!run.bestCompiled) {
      this.repo.setBest(run, await this.compileBest(run, version, signal));
      run = this.repo.get(id);
    }
    const best = run.bestCompiled!;
    return {
      run: this.summary(run, candidates),
      baselineScore: scores.baseline!.score!,
      iterations: scores.iterations,
      best: { version, score },
      adapter: best.adapter,
      tier: best.tier,
      accuracy: best.accuracy,
    };
  }

  /** The tier the skill uses: distilled when the version the run started from has a distilled adapter on
   *  this bundle; then the best version is distilled with the same recipe and scored on its tests. */
  private async compileBest(run: StoredRun, version: number, signal: AbortSignal): Promise<BestCompiled> {
    const { bundle, rowId } = await this.bundles.current();
    const start = this.distiller?.latestDistilled({ name: run.skill.name, version: run.skill.version }, rowId);
    if (!start || !this.distiller || start.recipe.kind !== 'distill')
      return { tier: 'instant', adapter: await this.compileVersion(run.skill.name, version, signal), accuracy: null };
    const ref = { name: run.skill.name, version };
    const { steps, lr, seed, from } = start.recipe;
    if (!this.distiller.latestDistilled(ref, rowId))
      await this.distiller.run({ skill: ref, steps, lr, seed, from }, { emit: () => {}, signal });
    const distilled = await this.distiller.distilledAdapter(ref);
    if (!distilled)
      throw new StudioError('not_found', `the distilled adapter of ${ref.name}@${version} was not stored`);
    const tests = this.tests.get(ref.name, version).tests;
    const results = await this.verify.runTests(bundle, tests, {
      mode: 'adapter',
      skillText: this.compiler.skill(ref).content,
      maxTokens: run.maxTokens,
      adapter: distilled.engine,
      signal,
    });
    const accuracy = results.length ? results.filter((r) => r.passed).length / results.length : 0;
    return { tier: 'distilled', adapter: distilled.row.key.slice(0, 12), accuracy };
  }

  private async compileVersion(name: string, version: number, signal?: AbortSignal): Promise<string | null> {
    const { bundle } = await this.bundles.current();
    if (!bundle.manifest.hypernet) return null;
    return (await this.compiler.compileAdapter({ name, version }, { signal })).result.adapter.id;
  }

  private saveVersion(run: StoredRun, c: StoredCandidate): number {
    const parsed = parseSkillMd(c.content);
    const error = parsed.diagnostics.find((d) => d.severity === 'error');
    if (error) throw new StudioError('bad_skill', `candidate ${c.rowId}: line ${error.line}: ${error.message}`);
    const provenance = {
      kind: 'evolve' as const,
      run: run.id,
      candidate: c.rowId,
      score: c.score ?? 0,
      from: run.skill.version,
    };
    return this.skills.save(
      run.skill.name,
      c.content,
      parsed.frontmatter.description ?? '',
      provenance,
      bodyHash(parsed.body),
    ).version.version;
  }

  private summary(run: StoredRun, candidates: StoredCandidate[]): EvolveRunSummary {
    const s = runScores(candidates, run.iterations, run.status === 'done');
    return {
      id: run.id,
      skill: { name: run.skill.name, version: run.skill.version },
      generator: run.generator,
      iterations: run.iterations,
      candidates: run.perIteration,
      seed: run.seed,
      modes: run.modes,
      status: run.status,
      error: run.error,
      baselineScore: s.baseline?.score ?? null,
      iterationsDone: s.iterationsDone,
      best: s.best && s.best.score !== null ? { candidate: s.best.rowId, score: s.best.score } : null,
      resultVersion: run.resultVersion,
      bestCompiled: run.bestCompiled,
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
    };
  }

  private candidate(run: StoredRun, id: number): StoredCandidate {
    const c = this.repo.candidates(run).find((x) => x.rowId === id);
    if (!c) throw new StudioError('not_found', `run ${run.id} has no candidate ${id}`);
    return c;
  }

  private testsOf(name: string, version: number): VerifierTest[] {
    const { tests } = this.tests.get(name, version);
    if (!tests.length)
      throw new StudioError(
        'invalid_input',
        `${name}@${version} has no verifier tests to score candidates with (pskills tests set)`,
      );
    return tests;
  }

  private generator(kind: EvolveGeneratorKind): Generator {
    if (kind === 'offline') return new OfflineGenerator();
    const endpoint = endpointFromSettings(this.settings.get());
    if (!endpoint)
      throw new StudioError(
        'invalid_input',
        'generator "llm" needs the settings llmBaseUrl and llmModel (pskills settings set llmBaseUrl http://127.0.0.1:8080/v1)',
      );
    return new LlmGenerator(endpoint, this.fetchFn);
  }
}
