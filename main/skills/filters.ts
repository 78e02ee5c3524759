// Import filters (docs/design.md §5): English skills only, and none whose licence forbids reuse.
import { francAll } from 'franc-min';

const MIN_WORDS = 20; // below this there is too little prose to judge; keep the skill
// Share of words in a non-Latin script. English skills that quote other scripts stay under 0.06 in
// the pinned packages; half-translated ones sit near 0.2 and are kept; translations start near 0.5.
const NON_LATIN_SHARE = 0.3;
const FRANC_MIN_CHARS = 200;
// Prose with this share of common English function words is English without asking franc. Terse
// English (lists, tables) can fall below it (0.03 in the pinned packages) and is then left to franc,
// which needs FRANC_MIN_CHARS to be reliable.
const ENGLISH_WORD_SHARE = 0.08;
const ENGLISH_WORDS = new Set(
  (
    'the a an and or but if then of to in on at by for from with without into as is are was were be been ' +
    'it its this that these those you your we our they their he she do does not no use using when what ' +
    'which how should must can will may each all any only also more than'
  ).split(' '),
);
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const SCRIPTS: [string, RegExp][] = [
  ['Han (Chinese/Japanese)', /\p{Script=Han}/u],
  ['Japanese kana', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['Hangul (Korean)', /\p{Script=Hangul}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Arabic', /\p{Script=Arabic}/u],
  ['Hebrew', /\p{Script=Hebrew}/u],
  ['Greek', /\p{Script=Greek}/u],
  ['Devanagari', /\p{Script=Devanagari}/u],
  ['Thai', /\p{Script=Thai}/u],
];

/** The prose of a markdown body: code blocks, inline code, URLs, HTML tags and link targets removed. */
export function proseOf(body: string): string {
  return body
    .replace(/^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?(^[ \t]*\1[ \t]*$|(?![\s\S]))/gm, ' ')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/\]\([^)]*\)/g, '] ')
    .replace(/\b(https?|ftp):\/\/\S+/g, ' ')
    .replace(/<[^>\n]+>/g, ' ');
}

/** Words of the prose; each Chinese/Japanese character counts as one, as those scripts use no spaces. */
export function wordsOf(prose: string): string[] {
  return prose
    .replace(CJK_CHAR, ' $& ')
    .split(/[^\p{L}\p{M}]+/u)
    .filter(Boolean);
}
/** A reason when the body is clearly not English, else null. Mixed or unclear text is kept. */
export function detectNonEnglish(body: string): string | null {
  const prose = proseOf(body);
  const words = wordsOf(prose);
  if (words.length < MIN_WORDS) return null;
  const nonLatin = words.filter((w) => !/\p{Script=Latin}/u.test(w));
  if (nonLatin.length / words.length > NON_LATIN_SHARE) {
    const pct = Math.round((100 * nonLatin.length) / words.length);
    return `not English: ${pct}% of the prose words are in a non-Latin script, mostly ${dominantScript(nonLatin)}`;
  }
  const englishShare = words.filter((w) => ENGLISH_WORDS.has(w.toLowerCase())).length / words.length;
  if (englishShare >= ENGLISH_WORD_SHARE || prose.length < FRANC_MIN_CHARS) return null;
  const [best] = francAll(prose, { minLength: FRANC_MIN_CHARS });
  if (!best || best[0] === 'eng' || best[0] === 'und') return null;
  return `not English: the prose reads as '${best[0]}' (ISO 639-3) and only ${Math.round(englishShare * 100)}% of its words are common English words`;
}

function dominantScript(words: string[]): string {
  let best = 'non-Latin';
  let bestCount = 0;
  for (const [name, re] of SCRIPTS) {
    const n = words.filter((w) => re.test(w)).length;
    if (n > bestCount) [best, bestCount] = [name, n];
  }
  return best;
}

// Rule: only an explicit restriction forbids reuse (proprietary, all rights reserved, UNLICENSED,
// no-derivatives, "do not copy/redistribute"). A pointer to a file we cannot judge ("Complete terms
// in LICENSE.txt", "SEE LICENSE IN …") is not a restriction by itself: the package licence, which is
// open for every pinned package, still applies. SPDX ids of open licences always pass.
const OPEN_SPDX =
  /^(MIT|MIT-0|ISC|0BSD|BSD-[23]-Clause|Apache-2\.0|Unlicense|CC0-1\.0|CC-BY-(3|4)\.0|CC-BY-SA-(3|4)\.0|MPL-2\.0|[AL]?GPL-[23]\.0(-only|-or-later)?|Zlib|BlueOak-1\.0\.0|WTFPL|Python-2\.0|PSF-2\.0)$/i;
const FORBIDDING: [RegExp, string][] = [
  [/\bproprietary\b/i, 'proprietary'],
  [/\ball rights reserved\b/i, 'all rights reserved'],
  [/^\s*\(?UNLICENSED\)?\s*$/, 'UNLICENSED (npm: not licensed for use by others)'],
  [/\bconfidential\b/i, 'confidential'],
  [/\bCC-BY(-NC)?-ND\b|\bno\s*deriv/i, 'no derivatives allowed'],
  [
    /\b(do not|don't|may not|must not|not (permitted|allowed) to)\s+(copy|use|reuse|redistribute|distribute|modify|share)\b/i,
    'copying or redistribution not permitted',
  ],
  [/\bnot for (re)?distribution\b/i, 'not for redistribution'],
];

export function licenseForbidsReuse(license?: string | null): string | null {
  const text = license?.trim();
  if (!text) return null;
  const ids = text.replace(/^\(|\)$/g, '').split(/\s+(?:OR|AND)\s+/i);
  if (ids.every((id) => OPEN_SPDX.test(id.trim()))) return null;
  for (const [re, why] of FORBIDDING) {
    if (re.test(text))
      return `licence forbids reuse (${why}): "${text.length > 80 ? `${text.slice(0, 77)}...` : text}"`;
  }
  return null;
}
