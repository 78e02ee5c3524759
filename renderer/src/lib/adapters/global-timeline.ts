// The global (EMA) adapter's timeline on the Adapters page, in words: each version of the current
// bundle's global adapter with its β, rank, source and time, newest first, the current one marked.
import type { AdapterSummary, GlobalVersion } from '../../../../common/api/adapter-schemas';
import { adapterTitle } from '../../../../common/adapters/name';

export interface TimelineRow {
  version: number;
  /** The global adapter this version points at (its short id). */
  adapter: string;
  kind: GlobalVersion['kind'];
  beta: number;
  /** β as shown: the first version is the adapter itself, whatever β was asked for. */
  betaText: string;
  rank: number;
  /** Where the version came from: the adapter merged in (by its name), or the version a rollback brought back. */
  source: string;
  /** The adapter merged in (an EMA update whose adapter is in the library), for a link. */
  sourceId: string | null;
  createdAt: string;
  /** Who made it: a lesson merged in, an adopted run's global adapter, or a person (the badge). */
  origin: GlobalVersion['source'];
  /** The badge's tooltip: what that origin means. */
  originHelp: string;
  /** The newest version: the one `model: "global"` uses. */
  current: boolean;
  /** An older version whose adapter differs from the current one (rolling back to it changes something). */
  canRollback: boolean;
}

const short = (key: string) => key.slice(0, 12);

/** β as typed (0.1, 0.25), not 0.30000000000000004. */
export const formatBeta = (beta: number): string => String(Number(beta.toPrecision(4)));

function sourceOf(
  v: GlobalVersion,
  find: (id: string) => AdapterSummary | undefined,
): { source: string; sourceId: string | null } {
  if (v.kind === 'rollback') {
    return { source: v.restoresVersion !== null ? `rollback to v${v.restoresVersion}` : 'rollback', sourceId: null };
  }
  const recipe = find(v.adapter)?.recipe;
  const key = recipe?.kind === 'ema' ? (recipe.sources[1] ?? null) : null;
  if (key === null) return { source: v.parentVersion === null ? 'first version' : 'update', sourceId: null };
  const merged = find(key);
  if (!merged) return { source: `merged ${short(key)}`, sourceId: null };
  return { source: `merged ${adapterTitle(merged)}`, sourceId: merged.id };
}

const ORIGIN_HELP: Record<GlobalVersion['source'], string> = {
  lesson: "a lesson's adapter merged in: a continual run's loop, or a lesson adopted into the Library",
  run: "an adopted continual run's global adapter merged in",
  manual: 'made by hand: the update form, the API or a rollback',
};

/** The rows, newest first; `find` looks an adapter up in the library (by short id or key). */
export function timelineRows(
  versions: readonly GlobalVersion[],
  find: (id: string) => AdapterSummary | undefined,
): TimelineRow[] {
  const sorted = [...versions].sort((a, b) => b.version - a.version);
  const head = sorted[0];
  return sorted.map((v) => ({
    version: v.version,
    adapter: short(v.adapter),
    kind: v.kind,
    beta: v.beta,
    betaText: v.kind !== 'rollback' && v.parentVersion === null ? `${formatBeta(v.beta)} · first` : formatBeta(v.beta),
    rank: v.rank,
    ...sourceOf(v, find),
    createdAt: v.createdAt,
    origin: v.source,
    originHelp: ORIGIN_HELP[v.source],
    current: v === head,
    canRollback: v !== head && v.adapter !== head?.adapter,
  }));
}
