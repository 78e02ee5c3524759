// How long a page takes to render, measured inside the page with performance marks: from the click
// on its sidebar link to the first frame after its table is complete. "Complete" means the table is
// in the DOM, not marked busy (the page's own refresh of the list has answered), says it lists
// `total` rows (data-total), and holds a row element for each of them, or, when the table draws
// only the rows in view (data-window="start:end"), for each row of that window. The end mark is taken in a task queued from
// the next requestAnimationFrame callback, that is after that frame's style, layout and paint.
import type { Page } from 'playwright-core';

export interface RenderTarget {
  /** data-testid of the sidebar link that opens the page; null times a page load from its start
   * (performance.timeOrigin) instead of a click */
  nav: string | null;
  /** data-testid of the table and of its rows */
  table: string;
  row: string;
  /** how many rows the table must list */
  total: number;
}

export interface RenderSample {
  ms: number;
  /** row elements in the DOM at the end mark */
  rowsInDom: number;
  /** whether the table drew a window of its rows */
  windowed: boolean;
}

// Plain JavaScript, handed to the page as text: functions that tsx compiles would carry its helpers
// (__name), which the page does not have.
const IN_PAGE = `async ({ nav, table, row, total }) => {
  const tableEl = () => document.querySelector('[data-testid="' + table + '"]');
  const rowCount = (t) => t.querySelectorAll('[data-testid="' + row + '"]').length;
  const complete = () => {
    const t = tableEl();
    if (!t || t.classList.contains('busy') || t.dataset.total !== String(total)) return false;
    if (t.dataset.window === undefined) return rowCount(t) === total;
    const [start, end] = t.dataset.window.split(':').map(Number);
    return end > start && rowCount(t) === end - start;
  };
  const link = nav === null ? null : document.querySelector('[data-testid="' + nav + '"]');
  if (nav !== null && !link) throw new Error('no element [data-testid="' + nav + '"]');
  performance.clearMarks();
  performance.mark('nav', { startTime: nav === null ? 0 : performance.now() });
  link?.click();
  await new Promise((resolve, reject) => {
    if (complete()) return resolve();
    const observer = new MutationObserver(() => {
      if (!complete()) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      observer.disconnect();
      const t = tableEl();
      const state = t ? 'data-total ' + t.dataset.total + ', ' + rowCount(t) + ' rows, busy ' + t.classList.contains('busy') : 'no table';
      reject(new Error(table + ' was not complete after 60 s: ' + state));
    }, 60000);
    observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['class', 'data-total'] });
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  performance.mark('rendered');
  const t = tableEl();
  return {
    ms: performance.measure('render', 'nav', 'rendered').duration,
    rowsInDom: rowCount(t),
    windowed: t.dataset.window !== undefined,
  };
}`;

export async function timeNavigation(page: Page, target: RenderTarget): Promise<RenderSample> {
  return (await page.evaluate(`(${IN_PAGE})(${JSON.stringify(target)})`)) as RenderSample;
}

/** Alternates between the pages `rounds` times (each visit leaves the other page first). */
export async function timePages(
  page: Page,
  targets: readonly RenderTarget[],
  rounds: number,
): Promise<Map<string, RenderSample[]>> {
  const samples = new Map<string, RenderSample[]>(targets.map((t) => [t.table, []]));
  for (let k = 0; k < rounds; k++) {
    for (const t of targets) samples.get(t.table)!.push(await timeNavigation(page, t));
  }
  return samples;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
