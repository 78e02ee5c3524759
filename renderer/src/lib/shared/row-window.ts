// Which rows of a long table to put in the DOM: those in the scroll viewport plus a margin, so a page
// of 1,000 skills or adapters draws a few dozen rows instead of all of them (under 200 ms).
// Pure, so the arithmetic is unit-tested without a DOM; VirtualRows (row-window.svelte.ts) feeds it.

/** Lists up to this long are drawn whole: no blank gaps in the page, and the browser's find works. */
export const WINDOW_FROM = 200;
/** Rows drawn before the viewport has been measured: more than a tall window shows. */
export const FIRST_ROWS = 60;
/** Rows drawn beyond each edge of the viewport, so a fast scroll shows rows, not a gap. */
export const OVERSCAN = 12;

export interface RowRange {
  start: number;
  end: number;
}

export interface Viewport {
  /** the visible part of the table body, in pixels from its top edge (from may be negative) */
  from: number;
  to: number;
  /** height of one row in pixels */
  rowHeight: number;
}

/** [start, end) of the rows to draw; every row when the list is short. */
export function rowWindow(total: number, view: Viewport | null): RowRange {
  if (total <= WINDOW_FROM) return { start: 0, end: total };
  if (!view || !(view.rowHeight > 0)) return { start: 0, end: Math.min(total, FIRST_ROWS) };
  const first = Math.floor(Math.max(0, view.from) / view.rowHeight) - OVERSCAN;
  const last = Math.ceil(Math.max(0, view.to) / view.rowHeight) + OVERSCAN;
  const start = Math.min(Math.max(0, first), Math.max(0, total - 1));
  return { start, end: Math.min(total, Math.max(start + 1, last)) };
}
