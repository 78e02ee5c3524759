// A run's scores as the CLI and the studio show them, from its stored candidates: the baseline, each
// iteration's candidate scores with the best so far, and the best candidate (ties: the earliest).
import type { StoredCandidate } from '../store/evolve-repo';

export interface IterationScores {
  iteration: number;
  candidateScores: number[];
  bestScore: number;
}

export interface RunScores {
  baseline: StoredCandidate | null;
  iterations: IterationScores[];
  /** Iterations whose candidates are all scored. */
  iterationsDone: number;
  best: StoredCandidate | null;
}

/** Whether `a` beats the best so far `b`: a higher score; on a tie the earlier candidate stays. */
export const beats = (a: StoredCandidate, b: StoredCandidate | null): boolean =>
  a.score !== null && (b === null || b.score === null || a.score > b.score);

/** `finished`: the run ended, so an iteration that proposed nothing (every edit already tried) is done. */
export function runScores(candidates: readonly StoredCandidate[], iterations: number, finished: boolean): RunScores {
  const baseline = candidates.find((c) => c.iteration === 0) ?? null;
  let best = baseline?.score != null ? baseline : null;
  const out: IterationScores[] = [];
  let done = 0;
  for (let it = 1; it <= iterations; it++) {
    const rows = candidates.filter((c) => c.iteration === it);
    if (rows.some((c) => c.score === null)) break;
    if (!rows.length && !finished && !candidates.some((c) => c.iteration > it)) break;
    for (const c of rows) if (beats(c, best)) best = c;
    out.push({ iteration: it, candidateScores: rows.map((c) => c.score!), bestScore: best?.score ?? 0 });
    done = it;
  }
  return { baseline, iterations: out, iterationsDone: done, best };
}
