// Chart colours follow the theme: chart-theme.ts maps app.css's variables (light and dark) to the
// colours ECharts is given, its fallbacks are app.css's own values, every option builder takes its
// colours from that mapping, and no component or chart module carries a colour of its own.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  normHeatmapOption,
  rankBlocksOption,
  cosineOption,
  spectrumOption,
} from '../../../renderer/src/lib/adapters/adapter-charts';
import {
  CHART_FALLBACK,
  CHART_VARS,
  chartThemeFrom,
  type ChartTheme,
} from '../../../renderer/src/lib/shared/chart-theme';
import { passRateChart } from '../../../renderer/src/lib/continual/continual-chart';
import { scoreChart } from '../../../renderer/src/lib/skills/evolve-chart';
import { APP_ROOT } from '../../../main/paths';

const RENDERER = join(APP_ROOT, 'renderer/src');
const APP_CSS = readFileSync(join(RENDERER, 'app.css'), 'utf8');

/** The custom properties of one rule block of app.css (`:root {` or `:root[data-theme='dark'] {`). */
function block(selector: string): Map<string, string> {
  const start = APP_CSS.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`app.css has no ${selector} block`);
  const body = APP_CSS.slice(start, APP_CSS.indexOf('}', start));
  return new Map([...body.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map((m) => [m[1]!, m[2]!.trim()]));
}
const LIGHT = block(':root');
const DARK = new Map([...LIGHT, ...block(":root[data-theme='dark']")]);
const reader = (vars: Map<string, string>) => (name: string) => vars.get(name) ?? '';
const allVars = Object.values(CHART_VARS).flatMap((v: string | readonly string[]) =>
  typeof v === 'string' ? [v] : [...v],
);

describe('chartThemeFrom', () => {
  it('reads each colour from its CSS variable, trimmed', () => {
    const vars = new Map(allVars.map((v) => [v, ` value-of${v} `]));
    const t = chartThemeFrom(reader(vars), 'light');
    expect(t.text).toBe('value-of--text');
    expect(t.grid).toBe('value-of--border');
    expect(t.series).toEqual(CHART_VARS.series.map((v) => `value-of${v}`));
    expect(t.diverging).toEqual(['value-of--danger', 'value-of--track', 'value-of--accent']);
  });

  it("falls back to the theme's own colours where a variable is unset", () => {
    expect(chartThemeFrom(() => '', 'light')).toEqual(CHART_FALLBACK.light);
    expect(chartThemeFrom(() => '  ', 'dark')).toEqual(CHART_FALLBACK.dark);
  });

  it('gives what app.css says, light and dark, and the fallbacks are those values', () => {
    for (const name of allVars) {
      expect(LIGHT.get(name), `${name} in :root`).toBeDefined();
      expect(block(":root[data-theme='dark']").get(name), `${name} in the dark block`).toBeDefined();
    }
    expect(chartThemeFrom(reader(LIGHT), 'light')).toEqual(CHART_FALLBACK.light);
    expect(chartThemeFrom(reader(DARK), 'dark')).toEqual(CHART_FALLBACK.dark);
  });

  it('gives dark text on light and light text on dark', () => {
    const lum = (hex: string) =>
      parseInt(hex.slice(1, 3), 16) + parseInt(hex.slice(3, 5), 16) + parseInt(hex.slice(5, 7), 16);
    const light = chartThemeFrom(reader(LIGHT), 'light');
    const dark = chartThemeFrom(reader(DARK), 'dark');
    expect(lum(light.text)).toBeLessThan(lum(light.surface));
    expect(lum(dark.text)).toBeGreaterThan(lum(dark.surface));
    expect(lum(dark.ramp[0])).toBeLessThan(lum(dark.ramp[2])); // the low end fades into the dark page
  });
});

describe('chart options take every colour from the theme', () => {
  const dark = CHART_FALLBACK.dark;
  type Axis = { axisLabel: { color: string }; splitLine: { lineStyle: { color: string } } };

  it('the ‖ΔW‖ heatmap: axes, grid, tooltip, ramp and hover outline', () => {
    const o = normHeatmapOption([{ layer: 0, module: 'q', value: 1 }], dark) as {
      xAxis: Axis;
      tooltip: { backgroundColor: string; textStyle: { color: string } };
      visualMap: { inRange: { color: string[] } };
      series: { emphasis: { itemStyle: { borderColor: string } } }[];
    };
    expect(o.xAxis.axisLabel.color).toBe(dark.muted);
    expect(o.xAxis.splitLine.lineStyle.color).toBe(dark.grid);
    expect(o.tooltip.backgroundColor).toBe(dark.surface);
    expect(o.tooltip.textStyle.color).toBe(dark.text);
    expect(o.visualMap.inRange.color).toEqual(dark.ramp);
    expect(o.series[0]!.emphasis.itemStyle.borderColor).toBe(dark.emphasis);
  });

  it('rank blocks, spectra and the cosine matrix use the series and diverging colours', () => {
    const blocks = rankBlocksOption(
      {
        id: 'abc',
        rankSlots: [1, 2, 3],
        blocks: [
          { source: 'a', weight: 1, offset: 0, rank: 2 },
          { source: 'b', weight: 0.5, offset: 2, rank: 1 },
        ],
      } as never,
      dark,
    ) as { series: { itemStyle: { color: string } }[] };
    expect(blocks.series.map((s) => s.itemStyle.color)).toEqual(dark.series.slice(0, 2));
    const spectrum = spectrumOption({ layer: 0, module: 'q', before: [2, 1], after: [2] }, dark) as {
      series: { itemStyle: { color: string } }[];
    };
    expect(spectrum.series.map((s) => s.itemStyle.color)).toEqual(dark.series.slice(0, 2));
    const cos = cosineOption(
      ['a', 'b'],
      [
        [1, 0],
        [0, 1],
      ],
      dark,
    ) as { visualMap: { inRange: { color: string[] } } };
    expect(cos.visualMap.inRange.color).toEqual(dark.diverging);
  });

  it('the evolve and continual charts', () => {
    const evolve = scoreChart([{ iteration: 1, candidate: 1, score: 0.5 }] as never, 3, dark) as {
      series: { color: string }[];
      yAxis: Axis;
    };
    expect(evolve.series.map((s) => s.color)).toEqual(dark.series.slice(0, 2));
    expect(evolve.yAxis.axisLabel.color).toBe(dark.muted);
    const continual = passRateChart([], 4, 'cat', dark) as {
      series: { color: string }[];
      tooltip: { borderColor: string };
    };
    expect(continual.series[0]!.color).toBe(dark.series[0]);
    expect(continual.tooltip.borderColor).toBe(dark.border);
  });

  it('the same chart differs between the themes', () => {
    const light: ChartTheme = CHART_FALLBACK.light;
    const values = [{ layer: 0, module: 'q', value: 1 }];
    expect(JSON.stringify(normHeatmapOption(values, light))).not.toBe(JSON.stringify(normHeatmapOption(values, dark)));
  });
});

describe('no colour of its own', () => {
  const HEX = /#[0-9a-fA-F]{3,8}\b/;
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
    );

  it('in any component style block', () => {
    const offenders = files(join(RENDERER, 'components'))
      .filter((f) => f.endsWith('.svelte'))
      .flatMap((f) => {
        const style = /<style[^>]*>([\s\S]*?)<\/style>/.exec(readFileSync(f, 'utf8'))?.[1] ?? '';
        return style
          .split('\n')
          .filter((line) => HEX.test(line))
          .map((line) => `${f.slice(RENDERER.length + 1)}: ${line.trim()}`);
      });
    expect(offenders).toEqual([]);
  });

  it('in the chart option builders', () => {
    for (const f of [
      'adapters/adapter-charts.ts',
      'skills/evolve-chart.ts',
      'continual/continual-chart.ts',
      'continual/rate-chart.ts',
    ]) {
      const code = readFileSync(join(RENDERER, 'lib', f), 'utf8');
      expect(
        code.split('\n').filter((line) => HEX.test(line)),
        f,
      ).toEqual([]);
    }
  });
});
