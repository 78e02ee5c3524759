// Chart colours from the page's CSS variables (app.css, light and dark), so ECharts draws axes, text,
// grid lines, tooltips and series in the theme's colours. ECharts takes colours as strings in its
// option, not from CSS, so they are read here and the options are rebuilt when the theme changes
// (chart-theme.svelte.ts reads the page). Pure, with app.css's values as fallbacks, for unit tests.
import type { Theme } from '../settings/theme';

export interface ChartTheme {
  text: string;
  muted: string;
  grid: string;
  /** tooltip box: background and border */
  surface: string;
  border: string;
  /** categorical colours for series and sources, in order */
  series: string[];
  /** a magnitude heatmap, low → high */
  ramp: [string, string, string];
  /** a signed heatmap (cosine), −1 → 0 → 1 */
  diverging: [string, string, string];
  /** outline of a hovered cell */
  emphasis: string;
}

type Vars = { [K in keyof ChartTheme]: ChartTheme[K] extends string ? string : readonly string[] };

/** The CSS variable each colour is read from. */
export const CHART_VARS: Vars = {
  text: '--text',
  muted: '--text-muted',
  grid: '--border',
  surface: '--bg',
  border: '--border-strong',
  series: ['--chart-1', '--chart-2', '--chart-3', '--chart-4', '--chart-5', '--chart-6', '--chart-7', '--chart-8'],
  ramp: ['--chart-ramp-low', '--accent', '--chart-ramp-high'],
  diverging: ['--danger', '--track', '--accent'],
  emphasis: '--text',
};

/** app.css's values, used when a variable is missing (no stylesheet, as in unit tests). */
export const CHART_FALLBACK: Record<Theme, ChartTheme> = {
  light: {
    text: '#1d2330',
    muted: '#5d6676',
    grid: '#dde1e7',
    surface: '#ffffff',
    border: '#c7cdd6',
    series: ['#2563c9', '#d9731a', '#2f9e5b', '#c23b6e', '#7b52c7', '#1a9aa8', '#a88a12', '#6b7280'],
    ramp: ['#f1f5fb', '#2563c9', '#0b1f4d'],
    diverging: ['#c4302b', '#e7eaef', '#2563c9'],
    emphasis: '#1d2330',
  },
  dark: {
    text: '#e3e7ee',
    muted: '#a3abb8',
    grid: '#363c46',
    surface: '#1b1e24',
    border: '#4a515d',
    series: ['#5b9bf0', '#f0a054', '#5cc27f', '#e87aa3', '#a78bfa', '#4fc3cf', '#d9bf4a', '#9aa3b2'],
    ramp: ['#262b33', '#5b9bf0', '#d6e6ff'],
    diverging: ['#f0716b', '#343a44', '#5b9bf0'],
    emphasis: '#e3e7ee',
  },
};

/** The chart colours of `theme`, each read through `read` (a CSS variable's value, '' when unset). */
export function chartThemeFrom(read: (name: string) => string, theme: Theme): ChartTheme {
  const fallback = CHART_FALLBACK[theme];
  const one = (name: string, dflt: string) => read(name).trim() || dflt;
  const many = (names: readonly string[], dflt: readonly string[]) => names.map((n, i) => one(n, dflt[i]!));
  return {
    text: one(CHART_VARS.text, fallback.text),
    muted: one(CHART_VARS.muted, fallback.muted),
    grid: one(CHART_VARS.grid, fallback.grid),
    surface: one(CHART_VARS.surface, fallback.surface),
    border: one(CHART_VARS.border, fallback.border),
    series: many(CHART_VARS.series, fallback.series),
    ramp: many(CHART_VARS.ramp, fallback.ramp) as ChartTheme['ramp'],
    diverging: many(CHART_VARS.diverging, fallback.diverging) as ChartTheme['diverging'],
    emphasis: one(CHART_VARS.emphasis, fallback.emphasis),
  };
}
