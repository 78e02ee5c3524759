// Frontmatter as rows of a two-column table, spec fields first, then fields kept as written.
import type { Frontmatter } from '../../../../common/api/skill-schemas';

export interface FrontmatterRow {
  key: string;
  value: string;
  /** Structured values (maps, lists of maps) are shown as preformatted text. */
  block: boolean;
  extra: boolean;
}

const SPEC_FIELDS: Array<[keyof Frontmatter, string]> = [
  ['name', 'name'],
  ['description', 'description'],
  ['license', 'license'],
  ['compatibility', 'compatibility'],
  ['allowedTools', 'allowed-tools'],
  ['metadata', 'metadata'],
];

export function frontmatterRows(fm: Frontmatter): FrontmatterRow[] {
  const rows: FrontmatterRow[] = [];
  for (const [field, key] of SPEC_FIELDS) {
    const value = fm[field];
    if (value !== undefined) rows.push({ key, ...show(value), extra: false });
  }
  for (const [key, value] of Object.entries(fm.extra)) rows.push({ key, ...show(value), extra: true });
  return rows;
}

function show(value: unknown): { value: string; block: boolean } {
  if (value === null) return { value: 'null', block: false };
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return { value: String(value), block: false };
  }
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) {
    return { value: value.map(String).join(', '), block: false };
  }
  return { value: JSON.stringify(value, null, 2), block: true };
}
