// The merge visualizer's charts as ECharts options, from the API's numbers: plain functions (no DOM,
// no echarts runtime), so the data shaping is unit-tested and Chart.svelte only draws.
import type { EChartsCoreOption } from 'echarts/core';
import type { AdapterSummary, AdapterVisual } from '../../../../common/api/adapter-schemas';
import type { ChartTheme } from '../shared/chart-theme';

export type { ChartTheme };

interface TargetValue {
  layer: number;
  module: string;
  value: number | null;
}

const fmt = (v: number) => (Math.abs(v) >= 1e-3 || v === 0 ? String(Number(v.toPrecision(3))) : v.toExponential(2));
export const targetLabel = (t: { layer: number; module: string }) => `L${t.layer} ${t.module}`;

/** A tooltip box in the theme's colours (ECharts' default is a white box). */
export const tooltip = (theme: ChartTheme, extra: Record<string, unknown> = {}) => ({
  confine: true,
  backgroundColor: theme.surface,
  borderColor: theme.border,
  textStyle: { color: theme.text, fontSize: 11 },
  ...extra,
});

const base = (theme: ChartTheme): EChartsCoreOption => ({
  animation: false,
  textStyle: { color: theme.text, fontSize: 11 },
  tooltip: tooltip(theme),
});

const pick = (theme: ChartTheme, i: number) => theme.series[i % theme.series.length]!;

/** An axis in the theme's colours. */
export const axis = (theme: ChartTheme, extra: Record<string, unknown>) => ({
  axisLine: { lineStyle: { color: theme.muted } },
  axisLabel: { color: theme.muted, fontSize: 10 },
  splitLine: { lineStyle: { color: theme.grid } },
  nameTextStyle: { color: theme.muted },
  ...extra,
});

/** Layers (rows, top = layer 0) × modules (columns, in first-seen order) with one value per cell. */
export function heatmapGrid(perTarget: readonly TargetValue[]): {
  layers: number[];
  modules: string[];
  cells: [number, number, number | null][];
  max: number;
} {
  const modules = [...new Set(perTarget.map((t) => t.module))];
  const layers = [...new Set(perTarget.map((t) => t.layer))].sort((a, b) => a - b);
  const cells = perTarget.map(
    (t) => [modules.indexOf(t.module), layers.indexOf(t.layer), t.value] as [number, number, number | null],
  );
  const max = Math.max(0, ...perTarget.map((t) => t.value ?? 0));
  return { layers, modules, cells, max };
}

/** ‖ΔW‖_F per (layer, module). */
export function normHeatmapOption(perTarget: readonly TargetValue[], theme: ChartTheme): EChartsCoreOption {
  const g = heatmapGrid(perTarget);
  return {
    ...base(theme),
    grid: { left: 44, right: 16, top: 8, bottom: 56 },
    xAxis: axis(theme, { type: 'category', data: g.modules, splitArea: { show: true } }),
    yAxis: axis(theme, { type: 'category', data: g.layers.map((l) => `L${l}`), inverse: true }),
    visualMap: {
      min: 0,
      max: g.max || 1,
      calculable: false,
      orient: 'horizontal',
      left: 'center',
      bottom: 0,
      itemHeight: 120,
      // The legend's two ends in numbers (high on the right): a colour ramp alone says no value.
      text: [fmt(g.max || 1), '0'],
      textGap: 6,
      textStyle: { color: theme.muted, fontSize: 10 },
      inRange: { color: theme.ramp },
      formatter: (v: number) => fmt(v),
    },
    tooltip: tooltip(theme, {
      formatter: (p: { value: [number, number, number] }) =>
        `L${g.layers[p.value[1]]} ${g.modules[p.value[0]]}: ‖ΔW‖ ${fmt(p.value[2])}`,
    }),
    series: [
      { type: 'heatmap', name: '‖ΔW‖', data: g.cells, emphasis: { itemStyle: { borderColor: theme.emphasis } } },
    ],
  };
}

/** Rank slots as bars; a cat merge's slots coloured by the source block they came from. */
export function rankBlocksOption(v: AdapterVisual, theme: ChartTheme): EChartsCoreOption {
  const slots = v.rankSlots.map((_, j) => String(j));
  const blocks = v.blocks.length
    ? v.blocks
    : [{ source: v.id, weight: 1, offset: 0, rank: v.rankSlots.length, own: true }];
  const series = blocks.map((b, i) => ({
    type: 'bar',
    stack: 'slots',
    name: 'own' in b ? 'rank slots' : `${b.source} · w ${fmt(b.weight)}`,
    itemStyle: { color: pick(theme, i) },
    data: v.rankSlots.map((x, j) => (j >= b.offset && j < b.offset + b.rank ? x : null)),
  }));
  return {
    ...base(theme),
    legend: { top: 0, textStyle: { color: theme.text, fontSize: 10 } },
    grid: { left: 48, right: 12, top: 44, bottom: 28 },
    xAxis: axis(theme, { type: 'category', data: slots, name: 'rank slot', nameLocation: 'middle', nameGap: 18 }),
    yAxis: axis(theme, { type: 'value', name: '‖piece‖' }),
    tooltip: tooltip(theme, { trigger: 'axis' }),
    series,
  };
}

/** Σ_{i≤k} σᵢ² / Σ σᵢ² for k = 1..n: the energy a truncation to rank k would keep. */
export function cumulativeEnergy(values: readonly number[]): number[] {
  const total = values.reduce((s, v) => s + v * v, 0);
  let run = 0;
  return values.map((v) => {
    run += v * v;
    return total > 0 ? run / total : 0;
  });
}

/** One target's singular values: before and after truncation, or the adapter's own with the energy curve. */
export function spectrumOption(s: AdapterVisual['spectra'][number], theme: ChartTheme): EChartsCoreOption {
  const idx = s.before.map((_, i) => String(i + 1));
  const series: Record<string, unknown>[] = [
    {
      type: 'line',
      name: s.after ? 'before (exact sum)' : 'σ',
      data: s.before,
      symbolSize: 5,
      itemStyle: { color: pick(theme, 0) },
    },
  ];
  if (s.after)
    series.push({
      type: 'line',
      name: 'after (truncated)',
      data: s.after,
      symbolSize: 7,
      symbol: 'diamond',
      itemStyle: { color: pick(theme, 1) },
    });
  else
    series.push({
      type: 'line',
      name: 'energy kept at rank k',
      yAxisIndex: 1,
      data: cumulativeEnergy(s.before).map((e) => Number((100 * e).toFixed(2))),
      lineStyle: { type: 'dashed' },
      symbol: 'none',
      itemStyle: { color: pick(theme, 2) },
    });
  return {
    ...base(theme),
    legend: { top: 0, textStyle: { color: theme.text, fontSize: 10 } },
    grid: { left: 48, right: s.after ? 12 : 40, top: 28, bottom: 28 },
    xAxis: axis(theme, { type: 'category', data: idx, name: 'i', nameLocation: 'middle', nameGap: 18 }),
    yAxis: [
      axis(theme, { type: 'value', name: 'σᵢ' }),
      ...(s.after ? [] : [axis(theme, { type: 'value', name: '%', min: 0, max: 100, splitLine: { show: false } })]),
    ],
    tooltip: tooltip(theme, { trigger: 'axis' }),
    series,
  };
}

/** One bar per target: a relative error (null = infinite, drawn as a gap). */
export function targetBarsOption(values: readonly TargetValue[], name: string, theme: ChartTheme): EChartsCoreOption {
  return {
    ...base(theme),
    // Room above for the y axis's name and below for the rotated target labels: neither is clipped.
    grid: { left: 48, right: 12, top: 30, bottom: 64 },
    xAxis: axis(theme, { type: 'category', data: values.map(targetLabel), axisLabel: { rotate: 60, fontSize: 9 } }),
    yAxis: axis(theme, { type: 'value', name }),
    tooltip: tooltip(theme, { trigger: 'axis' }),
    series: [{ type: 'bar', name, data: values.map((t) => t.value), itemStyle: { color: pick(theme, 3) } }],
  };
}

/** Pairwise cosine of ΔW, −1 (red) … 0 … 1 (blue), values written in the cells. */
export function cosineOption(
  ids: readonly string[],
  cosine: readonly number[][],
  theme: ChartTheme,
): EChartsCoreOption {
  const labels = ids.map((id) => id.slice(0, 8));
  const data = cosine.flatMap((row, i) => row.map((v, j) => [j, i, Number(v.toFixed(3))]));
  return {
    ...base(theme),
    grid: { left: 72, right: 12, top: 8, bottom: 40 },
    xAxis: axis(theme, { type: 'category', data: labels }),
    yAxis: axis(theme, { type: 'category', data: labels, inverse: true }),
    visualMap: { show: false, min: -1, max: 1, inRange: { color: theme.diverging } },
    series: [
      {
        type: 'heatmap',
        name: 'cosine',
        data,
        label: {
          show: ids.length <= 8,
          fontSize: 10,
          color: theme.text,
          formatter: (p: { value: number[] }) => p.value[2]!.toFixed(2),
        },
      },
    ],
  };
}

export interface LineageNode {
  id: string;
  label: string;
  /** generations from the adapter shown: −1 its sources, 0 itself, 1 what was made from it */
  depth: number;
  kind: string;
}
export interface LineageEdge {
  from: string;
  to: string;
  weight: number;
}

/**
 * The adapter, its ancestors (through each lineage, up to `maxDepth` generations) and the adapters
 * made from it, as nodes and weighted edges source → result. Unknown ids (another library) still show.
 */
export function lineageGraph(
  adapters: readonly AdapterSummary[],
  id: string,
  maxDepth = 4,
): { nodes: LineageNode[]; edges: LineageEdge[] } {
  const find = (x: string) => adapters.find((a) => a.id === x || a.key.startsWith(x));
  const nodes = new Map<string, LineageNode>();
  const edges: LineageEdge[] = [];
  const label = (a: AdapterSummary | undefined, x: string) =>
    a?.skill ? `${x}\n${a.skill.name}@${a.skill.version}` : `${x}\n${a ? a.recipe.kind : '?'}`;
  const add = (x: string, depth: number) => {
    const a = find(x);
    const short = a?.id ?? x.slice(0, 12);
    if (!nodes.has(short)) nodes.set(short, { id: short, label: label(a, short), depth, kind: a?.recipe.kind ?? '?' });
    return { short, a };
  };
  const root = add(id, 0);
  const walk = (x: { short: string; a: AdapterSummary | undefined }, depth: number) => {
    if (!x.a || -depth >= maxDepth) return;
    for (const l of x.a.lineage) {
      const seen = nodes.has(find(l.id)?.id ?? l.id);
      const src = add(l.id, depth - 1);
      edges.push({ from: src.short, to: x.short, weight: l.weight });
      if (!seen) walk(src, depth - 1);
    }
  };
  walk(root, 0);
  for (const child of adapters.filter((a) => a.lineage.some((l) => root.a?.key.startsWith(l.id)))) {
    add(child.id, 1);
    const w = child.lineage.find((l) => root.a!.key.startsWith(l.id))!.weight;
    edges.push({ from: root.short, to: child.id, weight: w });
  }
  return { nodes: [...nodes.values()], edges };
}

export function lineageOption(
  g: { nodes: LineageNode[]; edges: LineageEdge[] },
  root: string,
  theme: ChartTheme,
): EChartsCoreOption {
  const byDepth = new Map<number, LineageNode[]>();
  for (const n of g.nodes) byDepth.set(n.depth, [...(byDepth.get(n.depth) ?? []), n]);
  const kinds = [...new Set(g.nodes.map((n) => n.kind))];
  const data = g.nodes.map((n) => {
    const column = byDepth.get(n.depth)!;
    return {
      name: n.id,
      value: n.label.replace('\n', ' · '),
      x: n.depth * 160,
      y: (column.indexOf(n) - (column.length - 1) / 2) * 56,
      symbolSize: n.id === root ? 22 : 14,
      itemStyle: { color: pick(theme, kinds.indexOf(n.kind)) },
      label: { show: true, formatter: n.label, color: theme.text, fontSize: 10, lineHeight: 13, position: 'bottom' },
    };
  });
  return {
    ...base(theme),
    tooltip: tooltip(theme, { formatter: (p: { data: { value?: string } }) => p.data.value ?? '' }),
    series: [
      {
        type: 'graph',
        layout: 'none',
        roam: true,
        // The nodes' two-line labels sit below them and their ids run wide: keep both inside the box.
        left: 64,
        right: 64,
        top: 24,
        bottom: 44,
        data,
        edges: g.edges.map((e) => ({
          source: e.from,
          target: e.to,
          value: e.weight,
          label: { show: true, formatter: `w ${fmt(e.weight)}`, fontSize: 9, color: theme.muted },
        })),
        edgeSymbol: ['none', 'arrow'],
        edgeSymbolSize: 8,
        lineStyle: { color: theme.muted, width: 1.2 },
      },
    ],
  };
}
