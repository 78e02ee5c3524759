// A long table's visible window as reactive state: attach it to the <tbody> ({@attach rows.attach});
// it finds the scrolling ancestor and re-measures on scroll and resize. The table draws
// rows.slice(items) between two spacer rows of heights padTop(total) and padBottom(total).
import { rowWindow, type RowRange, type Viewport } from './row-window';

function scrollParent(el: HTMLElement): HTMLElement | null {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const y = getComputedStyle(p).overflowY;
    if (y === 'auto' || y === 'scroll') return p;
  }
  return null;
}

export class VirtualRows {
  private view = $state.raw<Viewport | null>(null);

  range(total: number): RowRange {
    return rowWindow(total, this.view);
  }

  /** Height of the blank space standing in for the rows above / below the window. */
  padTop(range: RowRange): number {
    return range.start * (this.view?.rowHeight ?? 0);
  }

  padBottom(range: RowRange, total: number): number {
    return (total - range.end) * (this.view?.rowHeight ?? 0);
  }

  readonly attach = (body: HTMLElement) => {
    const scroller = scrollParent(body);
    if (!scroller) return;
    let frame = 0;
    const measure = () => {
      frame = 0;
      const row = body.querySelector<HTMLElement>('tr:not([data-pad])');
      const rowHeight = row?.getBoundingClientRect().height ?? 0;
      const from = scroller.getBoundingClientRect().top - body.getBoundingClientRect().top;
      const next = { from, to: from + scroller.clientHeight, rowHeight };
      const v = this.view;
      if (!v || v.from !== next.from || v.to !== next.to || v.rowHeight !== next.rowHeight) this.view = next;
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(measure);
    };
    measure();
    scroller.addEventListener('scroll', schedule, { passive: true });
    const resized = new ResizeObserver(schedule);
    resized.observe(scroller);
    resized.observe(body);
    return () => {
      cancelAnimationFrame(frame);
      scroller.removeEventListener('scroll', schedule);
      resized.disconnect();
    };
  };
}
