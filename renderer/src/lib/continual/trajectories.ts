// The Trajectories page's pure parts (no DOM, unit-tested): filters → list and export requests, a
// suggested export file, and how a row's outcome reads.
import type {
  TrajectoryCondition,
  TrajectoryExportInput,
  TrajectoryListInput,
  TrajectorySummary,
} from '../../../../common/api/trajectory-schemas';

export type RatingFilter = '' | 'up' | 'down' | 'unrated';

export interface TrajectoryFilters {
  /** A skill name, optionally `name@n`; '' = every skill. */
  skill: string;
  rating: RatingFilter;
}

export const PAGE_SIZE = 50;

/** `name@3` → {skill: name, version: 3}; a bare name → {skill}; '' → {}. */
export function skillFilter(text: string): { skill?: string; version?: number } {
  const t = text.trim();
  if (!t) return {};
  const m = /^(.*\S)@(\d+)$/.exec(t);
  if (m && Number(m[2]) > 0) return { skill: m[1]!, version: Number(m[2]) };
  return { skill: t };
}

export function listInput(f: TrajectoryFilters, offset = 0): TrajectoryListInput {
  return { ...skillFilter(f.skill), ...(f.rating && { rating: f.rating }), limit: PAGE_SIZE, offset };
}

export function exportInput(f: TrajectoryFilters, file: string): TrajectoryExportInput {
  return { ...skillFilter(f.skill), ...(f.rating && { rating: f.rating }), file };
}

/** `<dataDir>/trajectories.jsonl` (a folder that exists), with the data folder's separator. */
export function suggestedExportFile(dataDir: string): string {
  const sep = dataDir.includes('\\') && !dataDir.includes('/') ? '\\' : '/';
  return `${dataDir.replace(/[\\/]+$/, '')}${sep}trajectories.jsonl`;
}

/** passes / fails (the checker's words, lib/shared/words.ts) or '' when none judged it. */
export function verdictLabel(t: Pick<TrajectorySummary, 'verdict'>): '' | 'passes' | 'fails' {
  return t.verdict === null ? '' : t.verdict.passed ? 'passes' : 'fails';
}

export function skillLabel(t: Pick<TrajectorySummary, 'skill'>): string {
  return t.skill ? `${t.skill.name}@${t.skill.version}` : '—';
}

/** How the skill reached the model, in the words of Compare's columns (lib/shared/words.ts). */
const CONDITION_LABELS: Record<TrajectoryCondition, string> = {
  none: 'no skill',
  in_context: 'in context',
  instant: 'instant',
  wrong_skill: 'wrong skill',
  adapter: 'an adapter',
};

/** `in context`, or '' when none was stored: it tells apart the rows one comparison stores. A
 *  comparison keeps its Distilled column as condition `adapter`: it reads "distilled" there. */
export function conditionLabel(t: Pick<TrajectorySummary, 'condition'> & { source?: string }): string {
  if (!t.condition) return '';
  if (t.condition === 'adapter' && t.source === 'compare') return 'distilled';
  return CONDITION_LABELS[t.condition];
}

/** `compare · in context`: the source and, when one was stored, the condition. */
export function sourceLabel(t: Pick<TrajectorySummary, 'source' | 'condition'>): string {
  return t.condition ? `${t.source} · ${conditionLabel(t)}` : t.source;
}
