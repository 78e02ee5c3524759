// How long a page takes to render, measured inside the page with performance marks, from the click
// on its sidebar link to two points:
// - drawn: the end of the first frame that shows the table listing `total` rows (data-total) with a
//   row element for each of them, or, when it draws only the rows in view (data-window="start:end"),
//   for each row of that window. The page may still be refreshing the list (the table is busy).
// - settled: the same after the page's own refresh of the list has answered (not busy).
// A frame's end is a task queued from its requestAnimationFrame callback: after style, layout, paint.
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
  /** click → the frame that first shows the table with every row of its window */
  ms: number;
  /** click → the frame after the page's own refresh of the list has answered (not busy) */
  settledMs: number;
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
  const drawn = () => {
    const t = tableEl();
    if (!t || t.dataset.total !== String(total)) return false;
    if (t.dataset.window === undefined) return rowCount(t) === total;
    const [start, end] = t.dataset.window.split(':').map(Number);
    return end > start && rowCount(t) === end - start;
  };
  const settled = () => drawn() && !tableEl().classList.contains('busy');
  // The end of the first frame after now: rAF runs before that frame's paint, the task after it.
  const afterFrame = (mark) =>
    new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.mark(mark)), 0)));
  const link = nav === null ? null : document.querySelector('[data-testid="' + nav + '"]');
  if (nav !== null && !link) throw new Error('no element [data-testid="' + nav + '"]');
  performance.clearMarks();
  performance.mark('nav', { startTime: nav === null ? 0 : performance.now() });
  link?.click();
  let drawnAt = null;
  await new Promise((resolve, reject) => {
    const check = () => {
      if (!drawnAt && drawn()) drawnAt = afterFrame('drawn');
      if (!settled()) return false;
      observer.disconnect();
      clearTimeout(timer);
      resolve();
      return true;
    };
    const observer = new MutationObserver(check);
    const timer = setTimeout(() => {
      observer.disconnect();
      const t = tableEl();
      const state = t ? 'data-total ' + t.dataset.total + ', ' + rowCount(t) + ' rows, busy ' + t.classList.contains('busy') : 'no table';
      reject(new Error(table + ' was not complete after 60 s: ' + state));
    }, 60000);
    observer.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['class', 'data-total', 'data-window'] });
    check();
  });
  await drawnAt;
  await afterFrame('settled');
  const t = tableEl();
  return {
    ms: performance.measure('drawn', 'nav', 'drawn').duration,
    settledMs: performance.measure('settled', 'nav', 'settled').duration,
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
