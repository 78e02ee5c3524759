// A rate from 0 to 1 against a step (the Continual page's pass rate per episode, the Evolve tab's
// scores per iteration) as an ECharts option: one frame, axes and legend, so both charts look alike
// and follow the theme. Plain data shaping, no DOM.
import type { EChartsCoreOption } from 'echarts/core';
import { axis, tooltip, type ChartTheme } from '../adapters/adapter-charts';

export interface RateChart {
  /** The x axis: its name and range, and how its whole-number ticks are spaced. */
  step: { name: string; min: number; max: number } & ({ interval: number } | { minInterval: number });
  /** The y axis's name (its range is 0 to 1). */
  rate: string;
  /** 'axis': one tooltip per step; 'item': one per point. */
  trigger: 'axis' | 'item';
  series: Record<string, unknown>[];
}

export function rateChart(c: RateChart, theme: ChartTheme): EChartsCoreOption {
  return {
    animation: false,
    textStyle: { color: theme.text, fontSize: 11 },
    tooltip: tooltip(theme, { trigger: c.trigger }),
    legend: { top: 0, textStyle: { color: theme.text } },
    grid: { left: 44, right: 16, top: 30, bottom: 34 },
    xAxis: axis(theme, { type: 'value', nameLocation: 'middle', nameGap: 22, ...c.step }),
    yAxis: axis(theme, { type: 'value', name: c.rate, min: 0, max: 1 }),
    series: c.series,
  };
}
