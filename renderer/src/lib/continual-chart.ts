// The Continual page's chart as an ECharts option (plain data shaping, no DOM): the pass rate on
// every lesson so far, measured after each episode.
import type { EChartsCoreOption } from 'echarts/core';
import { tooltip, type ChartTheme } from './adapter-charts';
import type { EpisodePoint } from './continual-run';

export function passRateChart(
  points: readonly EpisodePoint[],
  episodes: number,
  series: string,
  theme: ChartTheme,
): EChartsCoreOption {
  const axis = {
    axisLine: { lineStyle: { color: theme.muted } },
    axisLabel: { color: theme.muted, fontSize: 10 },
    splitLine: { lineStyle: { color: theme.grid } },
    nameTextStyle: { color: theme.muted },
  };
  return {
    animation: false,
    textStyle: { color: theme.text, fontSize: 11 },
    tooltip: tooltip(theme, { trigger: 'axis' }),
    legend: { top: 0, textStyle: { color: theme.text } },
    grid: { left: 44, right: 16, top: 30, bottom: 34 },
    xAxis: {
      type: 'value',
      name: 'episode',
      nameLocation: 'middle',
      nameGap: 22,
      min: 1,
      max: Math.max(2, episodes),
      minInterval: 1,
      ...axis,
    },
    yAxis: { type: 'value', name: 'pass rate', min: 0, max: 1, ...axis },
    series: [
      {
        name: series,
        type: 'line',
        color: theme.series[0],
        symbolSize: 7,
        data: [...points].sort((a, b) => a.episode - b.episode).map((p) => [p.episode, p.passRate]),
      },
    ],
  };
}
