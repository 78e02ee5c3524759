// What a version diff changed, in lines, from Monaco's line changes (pure: unit-tested without Monaco).

/** The fields of Monaco's ILineChange the counts need: an end line of 0 means "no lines on that side". */
export interface LineChange {
  originalStartLineNumber: number;
  originalEndLineNumber: number;
  modifiedStartLineNumber: number;
  modifiedEndLineNumber: number;
}

export interface DiffStats {
  /** Changed regions (hunks). */
  changes: number;
  added: number;
  removed: number;
}

const span = (start: number, end: number) => (end > 0 && end >= start ? end - start + 1 : 0);

export function lineChangeStats(changes: readonly LineChange[]): DiffStats {
  let added = 0;
  let removed = 0;
  for (const c of changes) {
    removed += span(c.originalStartLineNumber, c.originalEndLineNumber);
    added += span(c.modifiedStartLineNumber, c.modifiedEndLineNumber);
  }
  return { changes: changes.length, added, removed };
}

export function describeStats(s: DiffStats): string {
  if (s.changes === 0) return 'No differences';
  const hunks = `${s.changes} ${s.changes === 1 ? 'change' : 'changes'}`;
  return `${hunks}: +${s.added} −${s.removed} ${s.added + s.removed === 1 ? 'line' : 'lines'}`;
}
