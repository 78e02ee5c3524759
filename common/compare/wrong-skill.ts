// The wrong skill of a comparison: a dissimilar skill, not the neighbour in a list. The compare
// service (and so `pskills compare`) and the compare page's picker use this one rule.

export interface SkillRef {
  name: string;
  description: string;
  package: string | null;
}

/** Lower-cased words of 3+ letters/digits of the name (split at - and _) and the description. */
export function skillWords(s: SkillRef): Set<string> {
  return new Set(`${s.name.replace(/[-_]/g, ' ')} ${s.description}`.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
}

/** Jaccard similarity of two word sets (0 when both are empty). */
export function jaccard(a: Set<string>, b: Set<string>): number {
  let common = 0;
  for (const w of a) if (b.has(w)) common++;
  const union = a.size + b.size - common;
  return union === 0 ? 0 : common / union;
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The wrong skill for `target`: among the library's other skills, those of another package (all of
 * them when none is), the least similar quarter by word Jaccard of name + description, and of those
 * one drawn by a hash of the target's name (deterministic, not always the same outlier). Null when
 * the library holds no other skill.
 */
export function pickWrongSkill(target: SkillRef, library: readonly SkillRef[]): string | null {
  const others = library.filter((s) => s.name !== target.name);
  if (others.length === 0) return null;
  const elsewhere = target.package === null ? others : others.filter((s) => s.package !== target.package);
  const pool = elsewhere.length > 0 ? elsewhere : others;
  const words = skillWords(target);
  const ranked = pool
    .map((s) => ({ name: s.name, sim: jaccard(words, skillWords(s)) }))
    .sort((a, b) => a.sim - b.sim || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const least = ranked.slice(0, Math.max(1, Math.ceil(ranked.length / 4)));
  return least[fnv1a(target.name) % least.length]!.name;
}
