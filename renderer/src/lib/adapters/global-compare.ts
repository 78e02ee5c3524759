// The global adapter's update (ema.update) and two of its versions compared (adapters.similarity and
// adapters.get of the two versions' adapters), for the timeline on the Adapters page.
import type { AdapterDetail, GlobalVersion } from '../../../../common/api/adapter-schemas';
import type { StudioApi } from '../../../../common/api/contract';

export interface VersionComparison {
  a: { version: number; adapter: string; norm: number; rank: number };
  b: { version: number; adapter: string; norm: number; rank: number };
  /** cos(ΔW_a, ΔW_b) over all targets stacked */
  cosine: number;
  /** ‖ΔW_a − ΔW_b‖_F = √(‖a‖² + ‖b‖² − 2·cos·‖a‖‖b‖) */
  distance: number;
  /** per target: cosine, and the two norms */
  perTarget: { layer: number; module: string; cosine: number; normA: number; normB: number }[];
}

/** ‖a − b‖ from the two norms and their cosine (clamped at 0 against rounding). */
export function distanceOf(na: number, nb: number, cos: number): number {
  return Math.sqrt(Math.max(0, na * na + nb * nb - 2 * cos * na * nb));
}

const normAt = (d: AdapterDetail, t: { layer: number; module: string }) =>
  d.stats.norms.perTarget.find((x) => x.layer === t.layer && x.module === t.module)?.value ?? 0;

export async function compareVersions(
  api: Pick<StudioApi, 'adapters'>,
  a: GlobalVersion,
  b: GlobalVersion,
): Promise<VersionComparison> {
  const [da, db, sim] = await Promise.all([
    api.adapters.get({ id: a.adapter, singularValues: 0 }),
    api.adapters.get({ id: b.adapter, singularValues: 0 }),
    api.adapters.similarity({ ids: [a.adapter, b.adapter] }),
  ]);
  const cosine = sim.cosine[0]![1]!;
  return {
    a: { version: a.version, adapter: da.id, norm: da.stats.norms.overall, rank: da.rank },
    b: { version: b.version, adapter: db.id, norm: db.stats.norms.overall, rank: db.rank },
    cosine,
    distance: distanceOf(da.stats.norms.overall, db.stats.norms.overall, cosine),
    perTarget: sim.perTarget.map((t) => ({
      layer: t.layer,
      module: t.module,
      cosine: t.cosine[0]![1]!,
      normA: normAt(da, t),
      normB: normAt(db, t),
    })),
  };
}

/** β as typed in the update form: a number in [0, 1], or the reason it is not. */
export function parseBeta(text: string): { beta: number } | { problem: string } {
  const beta = Number(text);
  if (text.trim() === '' || !Number.isFinite(beta)) return { problem: 'the blend weight must be a number' };
  if (beta < 0 || beta > 1) return { problem: 'the blend weight must be between 0 and 1' };
  return { beta };
}

export async function emaUpdate(
  api: Pick<StudioApi, 'ema'>,
  adapterId: string,
  beta: number,
  rankBudget?: number,
): Promise<GlobalVersion> {
  const r = await api.ema.update({ adapterId, beta, ...(rankBudget !== undefined ? { rankBudget } : {}) });
  return r.version;
}
