// The Evolve tab's score chart: the best-so-far line steps up only when an iteration beats it, and
// every candidate is a point at its iteration.
import { describe, expect, it } from 'vitest';
import { bestSoFar, scoreChart } from '../../../renderer/src/lib/skills/evolve-chart';
import { CHART_FALLBACK } from '../../../renderer/src/lib/shared/chart-theme';

const theme = CHART_FALLBACK.light;

describe('evolve score chart', () => {
  it('keeps the best score so far per iteration, the baseline included', () => {
    const points = [
      { iteration: 0, score: 0.25 },
      { iteration: 1, score: 0.2 },
      { iteration: 1, score: 0.5 },
      { iteration: 2, score: 0.4 },
      { iteration: 3, score: 0.75 },
    ];
    expect(bestSoFar(points)).toEqual([
      { iteration: 0, score: 0.25 },
      { iteration: 1, score: 0.5 },
      { iteration: 2, score: 0.5 },
      { iteration: 3, score: 0.75 },
    ]);
    const option = scoreChart(points, 3, theme) as {
      series: { name: string; data: number[][] }[];
      xAxis: { max: number };
    };
    expect(option.series.map((s) => s.name)).toEqual(['best so far', 'candidates']);
    expect(option.series[1]!.data).toEqual(points.map((p) => [p.iteration, p.score]));
    expect(option.xAxis.max).toBe(3);
    expect(bestSoFar([])).toEqual([]);
  });
});
