// Which rows a long table draws (row-window.ts): short lists whole, long ones the rows in view plus
// the overscan on each side, clamped to the list, and never an empty window.
import { describe, expect, it } from 'vitest';
import { FIRST_ROWS, OVERSCAN, rowWindow, WINDOW_FROM } from '../../../renderer/src/lib/shared/row-window';

describe('rowWindow', () => {
  it('draws a list up to WINDOW_FROM rows whole, measured or not', () => {
    expect(rowWindow(0, null)).toEqual({ start: 0, end: 0 });
    expect(rowWindow(WINDOW_FROM, null)).toEqual({ start: 0, end: WINDOW_FROM });
    expect(rowWindow(WINDOW_FROM, { from: 900, to: 1500, rowHeight: 30 })).toEqual({ start: 0, end: WINDOW_FROM });
  });

  it('draws the first rows of a long list before the viewport is measured', () => {
    expect(rowWindow(1000, null)).toEqual({ start: 0, end: FIRST_ROWS });
    expect(rowWindow(1000, { from: 0, to: 600, rowHeight: 0 })).toEqual({ start: 0, end: FIRST_ROWS });
  });

  it('draws the rows in view plus the overscan', () => {
    // rows 100..120 are in view (30 px each from 3000 to 3600 px)
    expect(rowWindow(1000, { from: 3000, to: 3600, rowHeight: 30 })).toEqual({
      start: 100 - OVERSCAN,
      end: 120 + OVERSCAN,
    });
  });

  it('starts at 0 while the table begins below the top of the viewport', () => {
    // the table body starts 200 px below the viewport's top edge: from is negative
    expect(rowWindow(1000, { from: -200, to: 400, rowHeight: 20 })).toEqual({ start: 0, end: 20 + OVERSCAN });
  });

  it('ends at the last row when scrolled to the bottom, and past it keeps one row', () => {
    expect(rowWindow(1000, { from: 29_400, to: 30_000, rowHeight: 30 })).toEqual({ start: 980 - OVERSCAN, end: 1000 });
    expect(rowWindow(1000, { from: 90_000, to: 90_600, rowHeight: 30 })).toEqual({ start: 999, end: 1000 });
  });

  it('draws nothing more than the overscan when the table is scrolled out above', () => {
    expect(rowWindow(1000, { from: -2000, to: -1400, rowHeight: 30 })).toEqual({ start: 0, end: OVERSCAN });
  });
});
