// Stored adapters, global versions and statistics as the API returns them.
import type { AdapterSummary, GlobalVersion } from '../../../common/api/adapter-schemas';
import type { StatSummary } from '../../adapters/stats';
import type { StoredAdapter } from '../../store/adapters-repo';
import type { GlobalRow } from '../../store/global-versions';

export const shortId = (key: string) => key.slice(0, 12);

export const plainSummary = (x: StatSummary) => ({
  overall: x.overall,
  perTarget: x.perTarget.map(({ layer, module, value }) => ({ layer, module, value })),
});
/** JSON has no ∞: an infinite ratio (x/0) travels as null. */
export const nullableSummary = (x: StatSummary) => {
  const finite = (v: number) => (Number.isFinite(v) ? v : null);
  return {
    overall: finite(x.overall),
    perTarget: x.perTarget.map(({ layer, module, value }) => ({ layer, module, value: finite(value) })),
  };
};

export function summaryOf(a: StoredAdapter): AdapterSummary {
  return {
    id: shortId(a.key),
    key: a.key,
    rank: a.rank,
    alpha: a.alpha,
    recipe: a.recipe,
    lineage: a.lineage.map((l) => ({ id: shortId(l.key), weight: l.weight })),
    bundle: { id: a.bundle.id, sha256: a.bundle.sha256 },
    skill: a.skill,
    bytes: a.bytes,
    tensorsSha256: a.tensorsSha256,
    createdAt: a.createdAt,
    name: a.name,
  };
}

export const versionOf = (g: GlobalRow): GlobalVersion => ({
  version: g.n,
  adapter: shortId(g.adapterKey),
  kind: g.kind,
  beta: g.beta,
  rank: g.rank,
  parentVersion: g.parentN,
  restoresVersion: g.restoresN,
  source: g.source,
  createdAt: g.createdAt,
});
