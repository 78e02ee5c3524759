// The Continual page's chart as an ECharts option (plain data shaping, no DOM): the pass rate on
// every lesson so far, measured after each episode.
import type { EChartsCoreOption } from 'echarts/core';
import type { ChartTheme } from './adapter-charts';
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
