// The Adapters page's merge workbench checks, chart data shaping and version comparison math: plain
// functions of renderer/src/lib, no DOM.
import { describe, expect, it } from 'vitest';
import type { AdapterSummary, AdapterVisual } from '../../../common/api/adapter-schemas';
import {
  cumulativeEnergy,
  heatmapGrid,
  lineageGraph,
  rankBlocksOption,
  spectrumOption,
} from '../../../renderer/src/lib/adapters/adapter-charts';
import { distanceOf, parseBeta } from '../../../renderer/src/lib/adapters/global-compare';
import { filterAdapters, mergeProblem } from '../../../renderer/src/lib/adapters/merge-workbench';
import { CHART_FALLBACK } from '../../../renderer/src/lib/shared/chart-theme';

const theme = CHART_FALLBACK.light;
const key = (c: string) => c.repeat(64);
const adapter = (
  k: string,
  recipe: AdapterSummary['recipe'],
  lineage: AdapterSummary['lineage'] = [],
  skill: AdapterSummary['skill'] = null,
) =>
  ({
    id: k.slice(0, 12),
    key: k,
    rank: 4,
    recipe,
    lineage,
    skill,
    bundle: { id: 'tiny-random', sha256: key('e') },
  }) as unknown as AdapterSummary;

const a1 = adapter(key('a'), { kind: 'import', tensorsSha256: key('f') }, [], {
  name: 'review-prs',
  version: 2,
  sha256: key('f'),
});
const a2 = adapter(key('b'), { kind: 'import', tensorsSha256: key('f') });
const m = adapter(
  key('c'),
  { kind: 'merge', method: 'cat', weights: [1, -0.5], rank: null, sources: [key('a'), key('b')] },
  [
    { id: key('a').slice(0, 12), weight: 1 },
    { id: key('b').slice(0, 12), weight: -0.5 },
  ],
);
const child = adapter(key('d'), { kind: 'ema', beta: 1, rankBudget: 4, sources: [null, key('c')] }, [
  { id: key('c').slice(0, 12), weight: 1 },
]);
const lib = [a1, a2, m, child];

describe('merge workbench checks', () => {
  it('filters by words over id, skill, bundle and origin, and by kind', () => {
    expect(filterAdapters(lib, { query: 'review', kind: 'all' })).toEqual([a1]);
    expect(filterAdapters(lib, { query: 'bbbbbb', kind: 'all' })).toEqual([a2]);
    expect(filterAdapters(lib, { query: 'cat tiny', kind: 'all' })).toEqual([m]);
    expect(filterAdapters(lib, { query: '', kind: 'import' })).toEqual([a1, a2]);
    expect(filterAdapters(lib, { query: 'review', kind: 'merge' })).toEqual([]);
  });

  it('names what blocks a merge before any call', () => {
    const p = (id: string, rank: number, weight = 1, fromSkill = true) => ({ id, rank, weight, fromSkill });
    expect(mergeProblem([p('a', 4)], 'cat', 8)).toBe('pick at least two adapters');
    expect(mergeProblem([p('a', 4), p('b', 2)], 'cat', 8)).toBeNull();
    expect(mergeProblem([p('a', 4), p('b', 4, NaN)], 'cat', 8)).toBe('the weight of b is not a number');
    expect(mergeProblem([p('a', 4), p('b', 2)], 'svd', 0)).toMatch(/svd needs a target rank/);
    expect(mergeProblem([p('a', 4), p('b', 2)], 'svd', 3)).toBeNull();
    expect(mergeProblem([p('a', 4), p('b', 2)], 'linear', 3)).toBe('linear needs equal ranks; these have 4, 2');
    expect(mergeProblem([p('a', 4), p('b', 2)], 'cat', 8, 10)).toBeNull();
    expect(mergeProblem([p('a', 4), p('b', 2)], 'cat', 8, 401)).toBe('rehearse takes 0 to 400 steps');
    expect(mergeProblem([p('a', 4), p('b', 2, 1, false)], 'cat', 8, 10)).toBe(
      "rehearsal practises each adapter's skill; b comes from no skill version",
    );
    expect(mergeProblem([p('a', 4), p('b', 2, 1, false)], 'cat', 8, 0)).toBeNull();
  });
});

describe('chart data', () => {
  it('lays ‖ΔW‖ out as layers × modules', () => {
    const g = heatmapGrid([
      { layer: 1, module: 'q', value: 3 },
      { layer: 0, module: 'q', value: 1 },
      { layer: 0, module: 'v', value: 2 },
    ]);
    expect(g.layers).toEqual([0, 1]);
    expect(g.modules).toEqual(['q', 'v']);
    expect(g.cells).toEqual([
      [0, 1, 3],
      [0, 0, 1],
      [1, 0, 2],
    ]);
    expect(g.max).toBe(3);
  });

  it('cumulative energy is Σ_{i≤k}σᵢ²/Σσᵢ², ending at 1 (0 for an empty spectrum)', () => {
    expect(cumulativeEnergy([3, 4])).toEqual([9 / 25, 1]);
    expect(cumulativeEnergy([0, 0])).toEqual([0, 0]);
  });

  it('rank blocks: one series per source, each covering its slots only', () => {
    const v: AdapterVisual = {
      id: 'cccccccccccc',
      rankSlots: [5, 4, 3, 2, 1, 0.5],
      blocks: [
        { source: 'aaaaaaaaaaaa', weight: 1, offset: 0, rank: 4 },
        { source: 'bbbbbbbbbbbb', weight: -0.5, offset: 4, rank: 2 },
      ],
      spectra: [],
      truncation: null,
    };
    const series = rankBlocksOption(v, theme).series as { name: string; data: (number | null)[] }[];
    expect(series.map((s) => s.name)).toEqual(['aaaaaaaaaaaa · w 1', 'bbbbbbbbbbbb · w -0.5']);
    expect(series[0]!.data).toEqual([5, 4, 3, 2, null, null]);
    expect(series[1]!.data).toEqual([null, null, null, null, 1, 0.5]);
    const own = rankBlocksOption({ ...v, blocks: [] }, theme).series as { data: unknown[] }[];
    expect(own).toHaveLength(1);
    expect(own[0]!.data).toEqual(v.rankSlots);
  });

  it('spectrum: before/after lines for a truncation, else σ with the energy curve in %', () => {
    const cut = spectrumOption({ layer: 0, module: 'q', before: [3, 2, 1], after: [3, 2] }, theme);
    expect((cut.series as { name: string }[]).map((s) => s.name)).toEqual(['before (exact sum)', 'after (truncated)']);
    const own = spectrumOption({ layer: 0, module: 'q', before: [3, 4], after: null }, theme);
    expect((own.series as { data: number[] }[])[1]!.data).toEqual([36, 100]);
  });

  it('lineage graph: ancestors, the adapter and what was made from it, with weighted edges', () => {
    const g = lineageGraph(lib, m.id);
    expect(g.nodes.map((n) => [n.id, n.depth, n.kind])).toEqual([
      [m.id, 0, 'merge'],
      [a1.id, -1, 'import'],
      [a2.id, -1, 'import'],
      [child.id, 1, 'ema'],
    ]);
    expect(g.nodes[1]!.label).toBe(`${a1.id}\nreview-prs@2`);
    expect(g.edges).toEqual([
      { from: a1.id, to: m.id, weight: 1 },
      { from: a2.id, to: m.id, weight: -0.5 },
      { from: m.id, to: child.id, weight: 1 },
    ]);
    // From the child: two generations up; a source missing from the library still shows.
    const up = lineageGraph([child, m], child.id);
    expect(up.nodes.map((n) => [n.id, n.depth, n.kind])).toEqual([
      [child.id, 0, 'ema'],
      [m.id, -1, 'merge'],
      [a1.id, -2, '?'],
      [a2.id, -2, '?'],
    ]);
  });
});

describe('global version comparison', () => {
  it('distance from norms and cosine: ‖a − b‖² = ‖a‖² + ‖b‖² − 2cos‖a‖‖b‖', () => {
    expect(distanceOf(3, 4, 0)).toBeCloseTo(5, 12);
    expect(distanceOf(2, 2, 1)).toBe(0);
    expect(distanceOf(2, 2, 1 + 1e-12)).toBe(0); // rounding never gives NaN
    expect(distanceOf(1, 1, -1)).toBeCloseTo(2, 12);
  });

  it('β must be a number in [0, 1]', () => {
    expect(parseBeta('0.25')).toEqual({ beta: 0.25 });
    expect(parseBeta('1')).toEqual({ beta: 1 });
    expect(parseBeta('')).toEqual({ problem: 'the blend weight must be a number' });
    expect(parseBeta('x')).toEqual({ problem: 'the blend weight must be a number' });
    expect(parseBeta('1.5')).toEqual({ problem: 'the blend weight must be between 0 and 1' });
  });
});
