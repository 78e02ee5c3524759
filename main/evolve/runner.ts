// The evolve loop: the baseline scored, then per iteration the generator's candidates
// from the best text so far, each stored (text and diff) before it is scored and its scores stored as
// it finishes; at the end the best candidate, when it beats the baseline, becomes a skill version.
// The loop reads its state from the store on every start, so a resumed run picks up exactly where the
// stored rows end: an iteration without rows is proposed again, a row without a score is scored.
import { createTwoFilesPatch } from 'diff';
import type { EvolveEvent } from '../../common/api/evolve-schemas';
import type { VerifierTest } from '../../common/api/verify-schemas';
import { StudioError } from '../../common/errors';
import type { EvolveRepo, StoredCandidate, StoredRun } from '../store/evolve-repo';
import type { Generator } from './generator';
import { beats, runScores, type RunScores } from './summary';
import type { Scored } from './verifier';

export interface RunnerDeps {
  repo: Pick<EvolveRepo, 'candidates' | 'addIteration' | 'score' | 'finish'>;
  generator: Generator;
  verifier: { score(text: string, signal: AbortSignal): Promise<Scored> };
  tests: readonly VerifierTest[];
  /** Writes the best candidate as the skill's next version (called inside the run's last transaction). */
  saveVersion(best: StoredCandidate): number;
  /** Keeps a candidate's test runs (as trajectories), once its score is stored. */
  record?(candidate: StoredCandidate, scored: Scored): void;
}

export interface RunnerContext {
  signal: AbortSignal;
  emit(e: EvolveEvent): void;
}

export function unifiedDiff(parent: string, candidate: string): string {
  return createTwoFilesPatch('a/SKILL.md', 'b/SKILL.md', parent, candidate, undefined, undefined, { context: 3 });
}

const stopIfCancelled = (signal: AbortSignal) => {
  if (signal.aborted) throw new StudioError('cancelled', 'evolve cancelled');
};

export async function runEvolve(
  run: StoredRun,
  deps: RunnerDeps,
  ctx: RunnerContext,
): Promise<RunScores & { version: number | null }> {
  const scoreRow = async (c: StoredCandidate): Promise<void> => {
    stopIfCancelled(ctx.signal);
    const s = await deps.verifier.score(c.content, ctx.signal);
    stopIfCancelled(ctx.signal); // an answer cut short by cancel is not a score
    deps.repo.score(run, c.rowId, s.score, s.scores);
    deps.record?.(c, s);
    ctx.emit({
      type: 'scored',
      iteration: c.iteration,
      index: c.index,
      candidate: c.rowId,
      operator: c.operator,
      score: s.score,
    });
  };

  let rows = deps.repo.candidates(run);
  const baseline = rows.find((c) => c.iteration === 0)!;
  if (baseline.score === null) await scoreRow(baseline);

  for (let it = 1; it <= run.iterations; it++) {
    rows = deps.repo.candidates(run);
    const before = rows.filter((c) => c.iteration < it && c.score !== null);
    let best: StoredCandidate | null = null;
    for (const c of before) if (beats(c, best)) best = c;
    let mine = rows.filter((c) => c.iteration === it);
    if (!mine.length) {
      stopIfCancelled(ctx.signal);
      const parent = best!;
      const tried = new Set(rows.map((c) => c.content));
      const proposals = await deps.generator.propose({
        parent: parent.content,
        tests: deps.tests,
        count: run.perIteration,
        key: `${run.seed}:${it}`,
        failures: Object.values(parent.scores ?? {}).flatMap((s) => s.failed),
        exclude: tried,
        signal: ctx.signal,
      });
      stopIfCancelled(ctx.signal);
      const fresh = proposals.filter((p) => !tried.has(p.text) && (tried.add(p.text), true));
      mine = deps.repo.addIteration(
        run,
        it,
        fresh.map((p, index) => ({
          index,
          parent: parent.rowId,
          operator: p.operator,
          note: p.note,
          content: p.text,
          diff: unifiedDiff(parent.content, p.text),
        })),
      );
      ctx.emit({ type: 'proposed', iteration: it, candidates: mine.length });
    }
    for (const c of mine) if (c.score === null) await scoreRow(c);
    const now = runScores(deps.repo.candidates(run), it, true).iterations.at(-1)!;
    ctx.emit({ type: 'iteration', iteration: it, candidateScores: now.candidateScores, bestScore: now.bestScore });
  }

  stopIfCancelled(ctx.signal);
  const scores = runScores(deps.repo.candidates(run), run.iterations, true);
  const winner = scores.best;
  const better = run.accept && winner !== null && winner.iteration > 0;
  const version = deps.repo.finish(
    run,
    better ? { candidate: winner.rowId, write: () => deps.saveVersion(winner) } : null,
  );
  if (version !== null) ctx.emit({ type: 'accepted', version, score: winner!.score! });
  return { ...scores, version };
}
