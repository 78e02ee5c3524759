// Small display helpers shared by several views.
/** Local time as `2026-03-01 14:05`: compact, sortable, unambiguous in every locale. */
export function formatDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function shortHash(sha: string): string {
  return sha.slice(0, 10);
}

/** A duration in milliseconds without the unit: one decimal under 10, whole numbers above. */
export function formatMs(n: number): string {
  return n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US');
}
