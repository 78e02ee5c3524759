// Verifier tests of a skill version and verify.run: each test's task answered
// greedily through the engine, the way compare.run answers (generateBatch with per-row adapters, the
// skill text as the system message for in_context, cut to fit), and judged by its `expect`
// (common/verify/expect.ts). Each answer is kept as a trajectory (source `eval`) with its verdict.
import type {
  SkillTests,
  VerifierTest,
  VerifyEvent,
  VerifyMode,
  VerifyRunInput,
  VerifyRunResult,
  VerifyTestResult,
} from '../../../common/api/verify-schemas';
import { StudioError } from '../../../common/errors';
import { heldOutRate } from '../../../common/distill/practice';
import { checkExpect } from '../../../common/verify/expect';
import {
  checkPromptBytes,
  type BundleInfo,
  type ChatMessage,
  type EngineAdapter,
  type GenerateRequest,
} from '../../engine';
import type { TestRunOptions } from '../../evolve/verifier';
import { answerBatch, chatPrompt } from '../../skills/answer';
import type { AdaptersRepo } from '../../store/adapters-repo';
import type { SkillTestsRepo } from '../../store/skill-tests-repo';
import type { AdapterCache } from './adapter-cache';
import type { BundleRegistry } from './bundle-registry';
import type { CompileService } from './compile-service';
import type { TrajectoryService } from './trajectory-service';

export const DEFAULT_VERIFY_TOKENS = 64;
/** Tests answered in one engine batch. */
const BATCH = 8;

type SkillRef = { name: string; version: number };
type RunAdapter = { id: string; key: string; engine: EngineAdapter };
type Current = Awaited<ReturnType<BundleRegistry['current']>>;

const messagesOf = (t: VerifierTest): ChatMessage[] => t.messages ?? [{ role: 'user', content: t.prompt! }];

export class VerifyService {
  constructor(
    private readonly compiler: Pick<CompileService, 'skill' | 'compileAdapter'>,
    private readonly tests: SkillTestsRepo,
    private readonly adapters: Pick<AdaptersRepo, 'resolve'>,
    private readonly cache: Pick<AdapterCache, 'get'>,
    private readonly bundles: Pick<BundleRegistry, 'current'>,
    private readonly trajectories: Pick<TrajectoryService, 'record'>,
  ) {}

  /** verify.tests: the version's tests (its own, else inherited from the newest earlier version with some). */
  get(input: { name: string; version?: number }): SkillTests {
    const s = this.compiler.skill(input);
    const set = this.tests.get(s.name, s.version.version);
    return { skill: { name: s.name, version: s.version.version }, ...set };
  }

  /** verify.setTests: replaces the version's tests (checked by the contract's TestSet). */
  set(input: { name: string; version?: number; tests: VerifierTest[] }): SkillTests {
    const s = this.compiler.skill(input);
    this.tests.set(s.rowId, input.tests);
    return this.get({ name: s.name, version: s.version.version });
  }

  async run(input: VerifyRunInput, ctx: { emit(e: VerifyEvent): void; signal: AbortSignal }): Promise<VerifyRunResult> {
    const t0 = performance.now();
    const mode: VerifyMode = input.mode ?? 'instant';
    const maxTokens = input.maxTokens ?? DEFAULT_VERIFY_TOKENS;
    const skill = this.compiler.skill({ name: input.name, version: input.version });
    const who = { name: skill.name, version: skill.version.version };
    const set = this.tests.get(skill.name, who.version);
    let tests = set.tests;
    if (input.tests) {
      const unknown = input.tests.filter((id) => !tests.some((t) => t.id === id));
      if (unknown.length)
        throw new StudioError('not_found', `${skill.name}@${who.version} has no test "${unknown[0]}"`, {
          tests: unknown,
        });
      tests = tests.filter((t) => input.tests!.includes(t.id));
    }
    const current = await this.bundles.current();
    const bundle = current.bundle;

    const { adapter, practised } = await this.adapterFor(input, mode, who, current, ctx);
    if (ctx.signal.aborted) throw new StudioError('cancelled', 'verify cancelled');

    ctx.emit({ type: 'start', tests: tests.length });
    const results = await this.runTests(bundle, tests, {
      mode,
      skillText: skill.content,
      maxTokens,
      adapter: adapter?.engine ?? null,
      signal: ctx.signal,
      onResult: (index, r) => ctx.emit({ type: 'result', index, id: r.id, passed: r.passed }),
    });

    const passed = results.filter((r) => r.passed).length;
    const marked = practised ? results.map((r) => ({ ...r, practised: practised.has(r.id) })) : results;
    this.record(results, tests, { who, mode, maxTokens, adapterKey: adapter?.key ?? null, from: set.from }, current);
    return {
      skill: who,
      testsFrom: set.from,
      mode,
      adapter: adapter?.id ?? null,
      n: results.length,
      passed,
      passRate: results.length ? passed / results.length : 0,
      results: marked,
      ms: performance.now() - t0,
      ...(practised && { heldOut: heldOutRate(marked) }),
    };
  }

  /** The adapter a run answers with: compiled for instant, the stored one for adapter (on the loaded
   *  bundle), none otherwise; and a distilled adapter's practised tests. */
  private async adapterFor(
    input: VerifyRunInput,
    mode: VerifyMode,
    who: SkillRef,
    current: Current,
    ctx: { emit(e: VerifyEvent): void; signal: AbortSignal },
  ): Promise<{ adapter: RunAdapter | null; practised: ReadonlySet<string> | null }> {
    const bundle = current.bundle;
    if (mode === 'instant') {
      const c = await this.compiler.compileAdapter(who, {
        signal: ctx.signal,
        emit: (p) => ctx.emit({ type: 'compile', chunk: p.chunk, chunks: p.chunks }),
      });
      if (c.bundle !== bundle)
        throw new StudioError('conflict', 'the bundle changed while verify was compiling; run it again');
      return { adapter: { id: c.result.adapter.id, key: c.row.key, engine: c.engine }, practised: null };
    }
    if (mode !== 'adapter') return { adapter: null, practised: null };
    const row = this.adapters.resolve(input.adapter!);
    if (row.bundle.rowId !== current.rowId) {
      throw new StudioError(
        'invalid_input',
        `adapter ${row.key.slice(0, 12)} belongs to bundle ${row.bundle.id}, not the loaded ${bundle.manifest.id}`,
      );
    }
    const adapter = { id: row.key.slice(0, 12), key: row.key, engine: this.cache.get(row, bundle.manifest) };
    const practice = row.recipe.kind === 'distill' ? row.recipe.practice : undefined;
    return { adapter, practised: practice ? new Set(practice.practisedTests) : null };
  }

  /** Keeps each answer as a trajectory (source `eval`) with its verdict. */
  private record(
    results: readonly VerifyTestResult[],
    tests: readonly VerifierTest[],
    run: { who: SkillRef; mode: VerifyMode; maxTokens: number; adapterKey: string | null; from: SkillTests['from'] },
    current: Current,
  ): void {
    const { who, mode, maxTokens } = run;
    const bundleRef = { id: current.bundle.manifest.id, sha256: current.sha256 };
    this.trajectories.record(
      results.map((r, i) => ({
        source: 'eval' as const,
        skill: who,
        condition: mode === 'adapter' ? ('adapter' as const) : mode,
        adapterKey: run.adapterKey,
        bundle: bundleRef,
        sampling: { temperature: 0, maxTokens: tests[i]!.maxTokens ?? maxTokens },
        messages: [
          ...messagesOf(tests[i]!).map((m) => ({
            role: m.role as 'system' | 'user' | 'assistant' | 'tool',
            content: m.content,
          })),
          { role: 'assistant' as const, content: r.answer },
        ],
        verdict: { passed: r.passed, test: r.id, ...(r.reason !== null && { reason: r.reason }) },
        details: {
          verify: { testsFrom: run.from },
          finishReason: r.finishReason,
          completionTokens: r.completionTokens,
          ...(mode === 'in_context' && { truncated: r.truncated }),
        },
      })),
    );
  }

  /**
   * Answers `tests` greedily with the skill text in context (in_context), an adapter (instant,
   * adapter) or neither (none), and judges each answer by its `expect`. Also the scorer of evolve's
   * candidates, whose texts are not stored versions. Records nothing.
   */
  async runTests(
    bundle: BundleInfo,
    tests: readonly VerifierTest[],
    opts: TestRunOptions & { onResult?: (index: number, result: VerifyTestResult) => void },
  ): Promise<VerifyTestResult[]> {
    const results: VerifyTestResult[] = [];
    for (let start = 0; start < tests.length; start += BATCH) {
      const chunk = tests.slice(start, start + BATCH);
      const rows = chunk.map((t) =>
        this.request(bundle, t, opts.mode, opts.skillText, t.maxTokens ?? opts.maxTokens, opts.adapter),
      );
      const answers = await answerBatch(
        bundle,
        rows.map((r) => r.request),
        opts.signal,
      );
      if (opts.signal.aborted) throw new StudioError('cancelled', 'verify cancelled');
      answers.forEach((r, i) => {
        const t = chunk[i]!;
        const outcome = checkExpect(t.expect, r.text);
        const result: VerifyTestResult = {
          id: t.id,
          passed: outcome.passed,
          passRate: outcome.passed ? 1 : 0,
          answer: r.text,
          reason: outcome.reason,
          finishReason: r.finishReason,
          completionTokens: r.tokens.length,
          truncated: rows[i]!.truncated,
        };
        results.push(result);
        opts.onResult?.(start + i, result);
      });
    }
    return results;
  }

  /** One test as an engine row: greedy, the skill in the system message for in_context. */
  private request(
    bundle: BundleInfo,
    t: VerifierTest,
    mode: VerifyMode,
    skillText: string,
    maxTokens: number,
    adapter: EngineAdapter | null,
  ): { request: GenerateRequest; truncated: boolean } {
    const messages = messagesOf(t);
    checkPromptBytes(
      bundle,
      messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0),
    );
    const { ids, truncated } = chatPrompt(bundle, messages, mode === 'in_context' ? skillText : null, maxTokens);
    const { max_positions } = bundle.manifest.architecture;
    if (ids.length >= max_positions) {
      throw new StudioError(
        'invalid_input',
        `test "${t.id}": its prompt is ${ids.length} tokens; the model's context is ${max_positions} positions`,
        { test: t.id, tokens: ids.length, max_positions },
      );
    }
    return {
      request: { prompt: ids, adapter, maxNewTokens: maxTokens, sampling: { temperature: 0 }, stop: [] },
      truncated,
    };
  }
}
