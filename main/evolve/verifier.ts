// The evolve verifier: a candidate text scored with the skill's stored tests, in context (the text as
// the system message) and compiled (the text through the loaded bundle's hypernetwork), by the same
// test runner as verify.run (VerifyService.runTests). The score is the mean pass rate over the modes.
import type { EvolveMode } from '../../common/api/evolve-schemas';
import type { VerifierTest, VerifyMode, VerifyTestResult } from '../../common/api/verify-schemas';
import type { BundleInfo, EngineAdapter } from '../engine';
import type { CandidateScores, ModeScore } from '../store/evolve-repo';

/** How a skill's tests are answered: the mode, the text in context, the adapter, greedy tokens. */
export interface TestRunOptions {
  mode: VerifyMode;
  skillText: string;
  maxTokens: number;
  adapter: EngineAdapter | null;
  signal: AbortSignal;
}

export interface TestRunner {
  runTests(bundle: BundleInfo, tests: readonly VerifierTest[], opts: TestRunOptions): Promise<VerifyTestResult[]>;
}

export interface TextCompiler {
  compileText(content: string, ctx: { signal?: AbortSignal }): Promise<{ engine: EngineAdapter; bundle: BundleInfo }>;
}

export interface Scored {
  score: number;
  scores: CandidateScores;
  /** Each mode's test results, in the tests' order (kept as trajectories). */
  results?: Partial<Record<EvolveMode, VerifyTestResult[]>>;
}

export function modeScore(results: readonly VerifyTestResult[]): ModeScore {
  const passed = results.filter((r) => r.passed).length;
  return {
    passed,
    n: results.length,
    passRate: results.length ? passed / results.length : 0,
    failed: results.filter((r) => !r.passed).map((r) => ({ id: r.id, reason: r.reason })),
  };
}

/** The mean pass rate over the modes scored. */
export function combined(scores: CandidateScores): number {
  const rates = Object.values(scores).map((s) => s.passRate);
  return rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : 0;
}

export class CandidateVerifier {
  constructor(
    private readonly runner: TestRunner,
    private readonly compiler: TextCompiler,
    private readonly bundle: BundleInfo,
    private readonly tests: readonly VerifierTest[],
    readonly modes: readonly EvolveMode[],
    private readonly maxTokens: number,
  ) {}

  async score(text: string, signal: AbortSignal): Promise<Scored> {
    const scores: CandidateScores = {};
    const all: Partial<Record<EvolveMode, VerifyTestResult[]>> = {};
    for (const mode of this.modes) {
      let adapter: EngineAdapter | null = null;
      if (mode === 'instant') {
        const compiled = await this.compiler.compileText(text, { signal });
        if (compiled.bundle !== this.bundle) throw new Error('the bundle changed during the evolve run');
        adapter = compiled.engine;
      }
      const results = await this.runner.runTests(this.bundle, this.tests, {
        mode,
        skillText: text,
        maxTokens: this.maxTokens,
        adapter,
        signal,
      });
      scores[mode] = modeScore(results);
      all[mode] = results;
    }
    return { score: combined(scores), scores, results: all };
  }
}
