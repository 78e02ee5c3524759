// The Evolve tab's score chart as an ECharts option (plain data shaping, no DOM): every candidate's
// score as a point at its iteration (0: the baseline), and the best score so far as a line.
import type { EChartsCoreOption } from 'echarts/core';
import type { ChartTheme } from '../adapters/adapter-charts';
import { rateChart } from '../continual/rate-chart';

export interface ScorePoint {
  iteration: number;
  score: number;
}

/** The best score so far after each iteration that has a score, the baseline's included. */
export function bestSoFar(points: readonly ScorePoint[]): ScorePoint[] {
  const out: ScorePoint[] = [];
  let best = -Infinity;
  const iterations = [...new Set(points.map((p) => p.iteration))].sort((a, b) => a - b);
  for (const it of iterations) {
    for (const p of points) if (p.iteration === it) best = Math.max(best, p.score);
    out.push({ iteration: it, score: best });
  }
  return out;
}

export function scoreChart(points: readonly ScorePoint[], iterations: number, theme: ChartTheme): EChartsCoreOption {
  return rateChart(
    {
      step: { name: 'iteration', min: 0, max: Math.max(1, iterations), interval: 1 },
      rate: 'score',
      trigger: 'item',
      series: [
        {
          name: 'best so far',
          type: 'line',
          step: 'end',
          color: theme.series[0],
          data: bestSoFar(points).map((p) => [p.iteration, p.score]),
        },
        {
          name: 'candidates',
          type: 'line',
          color: theme.series[1],
          lineStyle: { width: 0 },
          symbolSize: 7,
          data: points.map((p) => [p.iteration, p.score]),
        },
      ],
    },
    theme,
  );
}
