// Offset ↔ line bookkeeping so every diagnostic can name a 1-based line of the file.

/** Offsets at which each line starts; a line ends at \n, \r\n or a lone \r. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

/** 1-based line containing `offset` (clamped to the text). */
export function lineOfOffset(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Lines an editor shows; a final newline does not open another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const n = lineStarts(text).length;
  return /(\r\n|\n|\r)$/.test(text) ? n - 1 : n;
}
