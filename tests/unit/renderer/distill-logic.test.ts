// The skill page's distillation pieces that are plain data shaping: the live loss chart (one point per
// step on an axis fixed to the run's steps) and how the Adapters page names a distilled adapter.
import { describe, expect, it } from 'vitest';
import type { AdapterSummary } from '../../../common/api/adapter-schemas';
import { adapterOrigin } from '../../../renderer/src/lib/adapters/adapter-origin';
import { CHART_FALLBACK } from '../../../renderer/src/lib/shared/chart-theme';
import { lossChart } from '../../../renderer/src/lib/compare/distill-chart';

const sha = (c: string) => c.repeat(64);
const summary = (recipe: AdapterSummary['recipe']): AdapterSummary => ({
  name: null,
  id: 'a'.repeat(12),
  key: sha('a'),
  rank: 12,
  alpha: 12,
  recipe,
  lineage: [{ id: 'b'.repeat(12), weight: 1 }],
  bundle: { id: 'pskills-base-5m', sha256: sha('c') },
  skill: { name: 'greet', version: 2, sha256: sha('d') },
  bytes: 10,
  tensorsSha256: sha('e'),
  createdAt: '2026-12-05T00:00:00.000Z',
});

describe('distillation on the skill page', () => {
  it('the loss chart has a point per step so far, on an axis as long as the run', () => {
    const option = lossChart([1.5, 0.9, 0.4], 40, CHART_FALLBACK.light) as {
      series: { data: number[][] }[];
      xAxis: { min: number; max: number };
    };
    expect(option.series[0]!.data).toEqual([
      [1, 1.5],
      [2, 0.9],
      [3, 0.4],
    ]);
    expect([option.xAxis.min, option.xAxis.max]).toEqual([1, 40]);
    expect((lossChart([], 1, CHART_FALLBACK.light) as { xAxis: { max: number } }).xAxis.max).toBe(2);
  });

  it('a distilled adapter reads as distilled, with its init, practice sources, steps, loss and time', () => {
    const o = adapterOrigin(
      summary({
        kind: 'distill',
        from: 'instant',
        steps: 40,
        lr: 0.003,
        seed: 0,
        questions: { test: 32, example: 1, user: 1 },
        finalLoss: 0.07001,
        seconds: 14.5,
      }),
    );
    expect(o).toEqual({
      kind: 'distill',
      label: 'distilled',
      summary:
        'distilled from the instant adapter · 40 steps · final loss 0.07 · 14.5 s · practice test 32, example 1, user 1',
    });
    expect(adapterOrigin(summary({ kind: 'instant', hypernet: 'perceiver', combine: 'mean' })).label).toBe('instant');
  });
});
