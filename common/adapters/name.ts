// An adapter's name as a person reads it, everywhere the studio lists adapters: the name it was
// given (a merge's, or a rename), else "skill@version · tier" from how it was made, with the day it
// was made ("pdf@2 · instant · 5 Dec"). The hash stays as the secondary line (docs/guide.md, "Adapter
// names").
import type { AdapterRecipe } from '../api/adapter-schemas';

export const MAX_ADAPTER_NAME = 120;

export interface Nameable {
  name: string | null;
  recipe: AdapterRecipe | { kind: string };
  skill: { name: string; version: number } | null;
  createdAt: string;
}

/** instant, distilled, merge, EMA, import: the tier in words (docs/distill.md for the first two). */
export function adapterTier(a: Pick<Nameable, 'recipe'>): string {
  switch (a.recipe.kind) {
    case 'instant':
      return 'instant';
    case 'distill':
      return 'distilled';
    case 'ema':
      return 'EMA';
    default:
      return a.recipe.kind;
  }
}

const skillOf = (a: Pick<Nameable, 'skill'>) => (a.skill ? `${a.skill.name}@${a.skill.version}` : null);

/** The given name, or one made from the skill and the tier. */
export function adapterName(a: Pick<Nameable, 'name' | 'recipe' | 'skill'>): string {
  if (a.name) return a.name;
  const skill = skillOf(a);
  const r = a.recipe as AdapterRecipe;
  switch (r.kind) {
    case 'instant':
    case 'distill':
      return `${skill ?? 'a skill'} · ${adapterTier(a)}`;
    case 'import':
      return skill ? `${skill} · import` : 'imported PEFT adapter';
    case 'ema':
      return `global adapter · EMA β ${Number(r.beta.toFixed(4))}`;
    case 'merge':
      return `${r.method} merge of ${r.sources.length}`;
    default:
      return skill ?? (a.recipe as { kind: string }).kind;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "5 Dec" (UTC, so every machine names an adapter alike); "5 Dec 2025" outside `now`'s year. */
export function shortDate(iso: string, now: Date = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso.slice(0, 10);
  const day = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
  return d.getUTCFullYear() === now.getUTCFullYear() ? day : `${day} ${d.getUTCFullYear()}`;
}

/** "skill@version · tier · date": the name with the day it was made, as lists and pickers show it. */
export function adapterTitle(a: Nameable, now?: Date): string {
  return `${adapterName(a)} · ${shortDate(a.createdAt, now)}`;
}

/** How a merge's name calls one of its parts: its given name, else its skill@version, else its made-up name. */
export function mergePart(p: Pick<Nameable, 'name' | 'recipe' | 'skill'>): string {
  return p.name ?? skillOf(p) ?? adapterName(p);
}

/** A merge's default name from its parts' words: "a@1 + b@2 (cat)", cut to fit the column. */
export function mergeNameOf(words: string[], method: string): string {
  const tail = ` (${method})`;
  let joined = words.join(' + ');
  const room = MAX_ADAPTER_NAME - tail.length;
  if (joined.length > room) joined = `${joined.slice(0, room - 1)}…`;
  return joined + tail;
}

/** A merge's default name from its parts. */
export function mergeName(parts: Pick<Nameable, 'name' | 'recipe' | 'skill'>[], method: string): string {
  return mergeNameOf(parts.map(mergePart), method);
}
