// The teacher's context for a skill longer than its window: the sections a question needs, found by the
// question's words (BM25 over the skill's own sections), packed in the skill's order (docs/distill.md
// "Long skills"). The sections are the skill's `##` (or deeper) headings as practice-text's `sections`
// finds them, each running to the next. The same rules as training/src/pskills_train/distill/sections.py;
// the shared cases in tests/fixtures/practice-cases.json ("sections") keep the two in step.
import { sections } from './practice-text';

const K1 = 1.2;
const B = 0.75;
/** A section is kept from this share of the best section's score up. */
export const RELEVANT = 0.3;

/** `text` cut before every `##`+ heading after the frontmatter; the pieces join back to `text`. */
export function splitSections(text: string): string[] {
  const starts = sections(text)
    .filter((s) => s.level >= 2 && s.start > 0)
    .map((s) => s.start);
  const bounds = [0, ...starts, text.length];
  const out: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++)
    if (bounds[i + 1]! > bounds[i]!) out.push(text.slice(bounds[i], bounds[i + 1]));
  return out;
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** One skill's sections with their word counts and token counts, built once for all its questions. */
export class SectionIndex {
  readonly parts: string[];
  private readonly docs: Map<string, number>[];
  private readonly lengths: number[];
  private readonly avg: number;
  private readonly df = new Map<string, number>();
  private readonly counts: (number | undefined)[];
  private readonly tokens: number;

  constructor(
    readonly text: string,
    private readonly count: (s: string) => number,
  ) {
    this.tokens = count(text);
    this.parts = splitSections(text);
    this.docs = this.parts.map((p) => {
      const tf = new Map<string, number>();
      for (const w of words(p)) tf.set(w, (tf.get(w) ?? 0) + 1);
      return tf;
    });
    this.lengths = this.docs.map((d) => [...d.values()].reduce((a, b) => a + b, 0));
    this.avg = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, this.docs.length);
    for (const d of this.docs) for (const w of d.keys()) this.df.set(w, (this.df.get(w) ?? 0) + 1);
    this.counts = this.parts.map(() => undefined);
  }

  /** BM25 of `query` against each section (a word counts once per query, in first-seen order). */
  scores(query: string): number[] {
    const n = this.docs.length;
    const asked = [...new Set(words(query))];
    return this.docs.map((d, i) => {
      let s = 0;
      for (const w of asked) {
        const tf = d.get(w) ?? 0;
        if (!tf) continue;
        const f = this.df.get(w)!;
        const idf = Math.log(1 + (n - f + 0.5) / (f + 0.5));
        s += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[i]!) / Math.max(1, this.avg)));
      }
      return s;
    });
  }

  /** The part of the skill that fits `budget` tokens and serves `query`: the head (what comes before the second
   * section), then sections by falling score (ties: the earlier first) while they fit, in the skill's order. A
   * section scoring under RELEVANT of the best, or repeating an earlier one word for word, is left out. The
   * whole text when it fits. */
  focused(query: string, budget: number): string {
    if (this.tokens <= budget) return this.text;
    const sc = this.scores(query);
    const best = Math.max(0, ...sc.slice(1));
    const seen = new Set([this.parts[0]!.trim()]);
    const keep = new Set([0]);
    let used = this.tokensOf(0);
    const order = this.parts.map((_, i) => i).slice(1);
    order.sort((a, b) => sc[b]! - sc[a]! || a - b);
    for (const i of order) {
      if (sc[i]! <= 0 || sc[i]! < RELEVANT * best) break;
      const body = this.parts[i]!.trim();
      if (!seen.has(body) && used + this.tokensOf(i) <= budget) {
        keep.add(i);
        seen.add(body);
        used += this.tokensOf(i);
      }
    }
    return [...keep]
      .sort((a, b) => a - b)
      .map((i) => this.parts[i])
      .join('');
  }

  private tokensOf(i: number): number {
    return (this.counts[i] ??= this.count(this.parts[i]!));
  }
}
