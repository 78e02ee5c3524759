// The skill page's live distillation loss as an ECharts option (plain data shaping, no DOM): the loss of
// each train step as a line, the x axis fixed to the run's steps so the line grows left to right.
import type { EChartsCoreOption } from 'echarts/core';
import { axis, tooltip, type ChartTheme } from '../adapters/adapter-charts';

export function lossChart(losses: readonly number[], steps: number, theme: ChartTheme): EChartsCoreOption {
  return {
    animation: false,
    textStyle: { color: theme.text, fontSize: 11 },
    tooltip: tooltip(theme, { trigger: 'axis' }),
    grid: { left: 48, right: 16, top: 16, bottom: 34 },
    xAxis: axis(theme, {
      type: 'value',
      name: 'step',
      nameLocation: 'middle',
      nameGap: 22,
      min: 1,
      max: Math.max(2, steps),
      minInterval: 1,
    }),
    yAxis: axis(theme, { type: 'value', name: 'loss (KL)', min: 0 }),
    series: [
      {
        name: 'loss',
        type: 'line',
        color: theme.series[0],
        showSymbol: losses.length < 60,
        data: losses.map((l, i) => [i + 1, l]),
      },
    ],
  };
}
