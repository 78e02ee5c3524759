// The chart colours as reactive state: read inside $derived or the template, they change when the
// theme does (the toggle, or the OS while the choice is "system"). The watch on <html data-theme>
// starts when the first chart reads it and stops when the last one is gone (createSubscriber).
import { createSubscriber } from 'svelte/reactivity';
import { chartThemeFrom, type ChartTheme } from './chart-theme';

const subscribe = createSubscriber((update) => {
  const watch = new MutationObserver(update);
  watch.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  return () => watch.disconnect();
});

/** The chart colours of the page as it is styled now. */
export function liveChartTheme(): ChartTheme {
  subscribe();
  const root = document.documentElement;
  const css = getComputedStyle(root);
  return chartThemeFrom((name) => css.getPropertyValue(name), root.dataset.theme === 'dark' ? 'dark' : 'light');
}
