// The Continual page's chart as an ECharts option (plain data shaping, no DOM): the pass rate on
// every lesson so far, measured after each episode.
import type { EChartsCoreOption } from 'echarts/core';
import type { ChartTheme } from '../adapters/adapter-charts';
import type { EpisodePoint } from './continual-run';
import { rateChart } from './rate-chart';

export function passRateChart(
  points: readonly EpisodePoint[],
  episodes: number,
  series: string,
  theme: ChartTheme,
): EChartsCoreOption {
  return rateChart(
    {
      step: { name: 'episode', min: 1, max: Math.max(2, episodes), minInterval: 1 },
      rate: 'pass rate',
      trigger: 'axis',
      series: [
        {
          name: series,
          type: 'line',
          color: theme.series[0],
          symbolSize: 7,
          data: [...points].sort((a, b) => a.episode - b.episode).map((p) => [p.episode, p.passRate]),
        },
      ],
    },
    theme,
  );
}

/** Mode against mode: the mean pass rate per episode of the listed runs of each mode (runs with the
 *  same settings but different seeds average), one line per mode; the run count is in its name. */
export function modesChart(
  runs: readonly { mode: string | null; points: readonly EpisodePoint[] }[],
  theme: ChartTheme,
): EChartsCoreOption {
  const byMode = new Map<string, Map<number, number[]>>();
  const count = new Map<string, number>();
  let last = 2;
  for (const r of runs) {
    if (!r.mode || r.points.length === 0) continue;
    count.set(r.mode, (count.get(r.mode) ?? 0) + 1);
    const m = byMode.get(r.mode) ?? new Map<number, number[]>();
    byMode.set(r.mode, m);
    for (const p of r.points) {
      m.set(p.episode, [...(m.get(p.episode) ?? []), p.passRate]);
      last = Math.max(last, p.episode);
    }
  }
  const series = [...byMode].map(([mode, eps], i) => ({
    name: `${mode.replace(/_/g, ' ')} (${count.get(mode)} ${count.get(mode) === 1 ? 'run' : 'runs'})`,
    type: 'line',
    color: theme.series[i % theme.series.length],
    symbolSize: 6,
    data: [...eps].sort((a, b) => a[0] - b[0]).map(([ep, xs]) => [ep, xs.reduce((s, x) => s + x, 0) / xs.length]),
  }));
  return rateChart(
    {
      step: { name: 'episode', min: 1, max: last, minInterval: 1 },
      rate: 'mean pass rate',
      trigger: 'axis',
      series,
    },
    theme,
  );
}
