// The teacher's context for a skill longer than its window: the sections a question needs, found by the
// question's words (BM25 over the skill's own sections), packed in the skill's order (docs/distill.md
// "Long skills"). The same rules as training/src/pskills_train/distill/sections.py; the shared cases in
// tests/fixtures/practice-cases.json ("sections") keep the two in step.

const HEADING = /^#{2,6}\s/;
const K1 = 1.2;
const B = 0.75;
/** A section is kept from this share of the best section's score up. */
export const RELEVANT = 0.3;

/** `text` cut before every `##`+ heading outside a ``` fence; the pieces join back to `text`. */
export function splitSections(text: string): string[] {
  const starts: number[] = [];
  let fenced = false;
  let at = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && at > 0 && HEADING.test(line)) starts.push(at);
    at += line.length + 1;
  }
  const bounds = [0, ...starts, text.length];
  const out: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++)
    if (bounds[i + 1]! > bounds[i]!) out.push(text.slice(bounds[i], bounds[i + 1]));
  return out;
}

export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** BM25 of `query` against each section (a word counts once per query, in first-seen order). */
export function sectionScores(sections: readonly string[], query: string): number[] {
  const docs = sections.map((s) => {
    const tf = new Map<string, number>();
    for (const w of words(s)) tf.set(w, (tf.get(w) ?? 0) + 1);
    return tf;
  });
  const lengths = sections.map((s) => words(s).length);
  const n = docs.length;
  const avg = lengths.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const df = new Map<string, number>();
  for (const d of docs) for (const w of d.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const asked = [...new Set(words(query))];
  return docs.map((d, i) => {
    let s = 0;
    for (const w of asked) {
      const tf = d.get(w) ?? 0;
      if (!tf) continue;
      const f = df.get(w)!;
      const idf = Math.log(1 + (n - f + 0.5) / (f + 0.5));
      s += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * lengths[i]!) / Math.max(1, avg)));
    }
    return s;
  });
}

/** The part of `text` that fits `budget` tokens (`count`) and serves `query`: the head (what comes before
 * the second section), then sections by falling score (ties: the earlier first) while they fit, in the
 * skill's order. A section scoring under RELEVANT of the best, or repeating an earlier one word for word,
 * is left out. `text` itself when it fits. */
export function focusedSkill(text: string, query: string, budget: number, count: (s: string) => number): string {
  if (count(text) <= budget) return text;
  const parts = splitSections(text);
  const sc = sectionScores(parts, query);
  const best = Math.max(0, ...sc.slice(1));
  const seen = new Set([parts[0]!.trim()]);
  const keep = new Set([0]);
  let used = count(parts[0]!);
  const order = parts.map((_, i) => i).slice(1);
  order.sort((a, b) => sc[b]! - sc[a]! || a - b);
  for (const i of order) {
    if (sc[i]! <= 0 || sc[i]! < RELEVANT * best) break;
    const n = count(parts[i]!);
    const body = parts[i]!.trim();
    if (!seen.has(body) && used + n <= budget) {
      keep.add(i);
      seen.add(body);
      used += n;
    }
  }
  return [...keep]
    .sort((a, b) => a - b)
    .map((i) => parts[i])
    .join('');
}
