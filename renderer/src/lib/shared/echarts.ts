// The one place that pulls in ECharts, with only the charts and components the visualizer draws
// (tree-shaken through echarts/core) and the SVG renderer (crisp at any zoom, text stays text).
// Chart.svelte imports this module lazily, so ECharts is a chunk of its own loaded on first use.
import { BarChart, GraphChart, HeatmapChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { init, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';

use([
  BarChart,
  GraphChart,
  HeatmapChart,
  LineChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  VisualMapComponent,
  SVGRenderer,
]);

export { init };
