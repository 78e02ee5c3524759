// An adapter's key: the sha256 of its bundle's hash, its skill version's hash and its recipe, so the
// same input always finds the same row.
import type { AdapterRecipe } from '../../common/api/adapter-schemas';
import { OLD_INSTANT_KIND } from '../../common/api/instant-name';
import { sha256Hex } from './adapter-tensors';

/** JSON with object keys sorted at every level: the same value always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function adapterKey(bundleSha: string, skillSha: string | null, recipe: AdapterRecipe): string {
  // Instant adapters were keyed when their kind was named `compile`: hashed under that name, every
  // stored key (and the merge sources, EMA steps and lineage that name it) stays what it was.
  const hashed = recipe.kind === 'instant' ? { ...recipe, kind: OLD_INSTANT_KIND } : recipe;
  return sha256Hex(canonicalJson({ bundle: bundleSha, skill: skillSha, recipe: hashed }));
}
