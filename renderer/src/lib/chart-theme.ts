// Chart colours from the page's CSS variables, so charts follow the light or dark theme.
import type { ChartTheme } from './adapter-charts';

export function chartTheme(): ChartTheme {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return { text: v('--text', '#1d2330'), muted: v('--text-muted', '#5d6676'), grid: v('--border', '#dde1e7') };
}
