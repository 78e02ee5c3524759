// A skill's text as practice reads it, the same way training/src/pskills_train/synth/skill.py and
// template.py do (the shared cases in tests/fixtures/practice-cases.json keep the two in step): ATX
// headings outside fences, a section running to the next heading of its level or higher, each
// heading's kind, section text lightly cleaned, and one seeded hash for every choice.

export interface SkillDoc {
  readonly name: string;
  readonly description: string;
  readonly text: string;
}

export interface DocSection {
  readonly heading: string;
  readonly level: number;
  /** Offsets in the normalised text: the heading line, its body, its end (subsections included). */
  readonly start: number;
  readonly bodyStart: number;
  readonly end: number;
  /** Where its own text ends: the next heading of any level. */
  readonly ownEnd: number;
}

const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function normalise(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/^\ufeff/, '');
}

/** Offset where the body starts: after a leading `---` frontmatter block, else 0. */
function bodyOffset(text: string): number {
  if (!text.startsWith('---\n')) return 0;
  const m = /\n---[ \t]*(?:\n|$)/.exec(text.slice(3));
  return m ? 3 + m.index + m[0].length : 0;
}

function plain(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`]+/g, '')
    .trim();
}

export function sections(text: string): DocSection[] {
  const flat: { heading: string; level: number; start: number; bodyStart: number }[] = [];
  const offset = bodyOffset(text);
  let pos = 0;
  let fence: string | null = null;
  for (const line of text.split(/(?<=\n)/)) {
    const bare = line.replace(/\n$/, '');
    const m = FENCE.exec(bare);
    if (fence === null && m) fence = m[1]![0]!.repeat(3);
    else if (fence !== null && m && m[1]!.startsWith(fence)) fence = null;
    else if (fence === null) {
      const h = ATX.exec(bare);
      if (h && h[2]!.trim() && pos >= offset)
        flat.push({ heading: plain(h[2]!), level: h[1]!.length, start: pos, bodyStart: pos + line.length });
    }
    pos += line.length;
  }
  return flat.map((s, i) => ({
    ...s,
    end: flat.slice(i + 1).find((n) => n.level <= s.level)?.start ?? text.length,
    ownEnd: flat[i + 1]?.start ?? text.length,
  }));
}

export function body(text: string, s: DocSection, own = false): string {
  return text.slice(s.bodyStart, own ? s.ownEnd : s.end).replace(/^\n+|\n+$/g, '');
}

// First match wins, as template.py's KIND_PATTERNS.
const KINDS: [string, RegExp][] = [
  ['when_not_to_use', /\bwhen not to\b|\bdo not use\b|\bnot for\b/],
  ['examples', /\bexamples?\b|\bsamples?\b|\bdemo\b|\bscenarios?\b/],
  [
    'pitfalls',
    /pitfall|mistake|gotcha|anti.?pattern|troubleshoot|caveat|warning|\bavoid\b|common (issues|errors|problems)|\bdon'?t\b|\bdo not\b|error handling|edge cases?|failure/,
  ],
  [
    'when_to_use',
    /\bwhen to\b|\bwhen this\b|\bwhen you\b|\busage\b|use cases?|\btriggers?\b|\bactivat|\bapplies\b|\bpurpose\b|\bscope\b/,
  ],
  [
    'constraints',
    /constraint|\brules?\b|guardrail|requirement|limitation|\bmust\b|\bnever\b|\bpolicy\b|best practice|\bprinciples?\b|\bimportant\b|\bcritical\b|\bguidelines?\b|\bconventions?\b|checklist/,
  ],
  [
    'steps',
    /\bsteps?\b|workflow|instructions?|procedure|how to|process|quick ?start|getting started|\bsetup\b|\bphase|\balgorithm\b|how it works|\bguide\b/,
  ],
];

export function sectionKind(heading: string): string {
  const h = heading.toLowerCase().replace(/[^\p{L}\p{N}_\s'/-]/gu, ' ');
  return KINDS.find(([, rx]) => rx.test(h))?.[0] ?? 'other';
}

/** No HTML comments, at most one blank line in a row, cut at a line boundary under `maxChars`. */
export function cleanAnswer(text: string, maxChars: number): string {
  const t = text
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/\n[ \t]*\n(?:[ \t]*\n)+/g, '\n\n')
    .trim();
  if (t.length <= maxChars) return t;
  const cut = t.lastIndexOf('\n', maxChars - 1);
  return t.slice(0, cut > Math.floor(maxChars / 2) ? cut : maxChars).trimEnd();
}

/** Sections with enough text of their own, skipping a title that spans the whole body. */
export function answerable(text: string, all: readonly DocSection[], minChars = 20): DocSection[] {
  const top = Math.min(...all.map((s) => s.level));
  const loneTop = all.filter((s) => s.level === top).length === 1 && all.length > 1;
  return all.filter((s) => !(loneTop && s.level === top) && cleanAnswer(body(text, s), 1e9).length >= minChars);
}

/** The text without its Examples sections (for practice that may not see them: `distilled_synth`). */
export function withoutExamples(text: string): string {
  const spans = sections(text)
    .filter((s) => sectionKind(s.heading) === 'examples')
    .map((s) => [s.start, s.end] as const);
  let out = '';
  let at = 0;
  for (const [a, b] of spans) {
    if (a < at) continue; // inside a span already cut
    out += text.slice(at, a);
    at = b;
  }
  return out + text.slice(at);
}

/** FNV-1a (32-bit, then mixed) over the UTF-8 of the parts joined by U+001F: the one seeded choice of both sides. */
export function hash(...parts: readonly (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(parts.map(String).join('\x1f'))) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  // murmur3's finaliser: FNV's low bits barely move when only the last part changes.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

export function pick<T>(items: readonly T[], ...parts: readonly (string | number)[]): T {
  return items[hash(...parts) % items.length]!;
}

// ---- teacher answers that parrot an example (docs/distill.md "Practice", "Parroted answers") ----

const NUMBER = /[0-9]+/g;

/** Numbers of two digits or more that the skill writes only in its Examples: an example's items. */
export function exampleNumbers(text: string): Set<string> {
  const t = normalise(text);
  const outside = new Set(withoutExamples(t).match(NUMBER) ?? []);
  return new Set((t.match(NUMBER) ?? []).filter((n) => n.length >= 2 && !outside.has(n)));
}

/** Whether a greedy answer repeats an example's number (`exampleNumbers`) that the chat it answers does
 * not hold: a small teacher answering a request it cannot place with an example's item. */
export function parrots(answer: string, asked: string, numbers: ReadonlySet<string>): boolean {
  const given = new Set(asked.match(NUMBER) ?? []);
  return (answer.match(NUMBER) ?? []).some((n) => numbers.has(n) && !given.has(n));
}
