// SKILL.md as the edit operators see it: the frontmatter kept byte for byte, a head (the title and
// what precedes the first `##` section) and the sections, each a heading line and its lines. Headings
// and list items inside fenced code are text, not structure. Joining the parts gives the text back.
import { splitFrontmatter } from '../skills/frontmatter';

export interface SkillSection {
  /** The heading line, e.g. `## Steps`. */
  heading: string;
  /** Lines after the heading up to the next section (blank lines included). */
  lines: string[];
}

export interface SkillText {
  /** Everything before the body: the frontmatter with its fences (empty when there is none). */
  front: string;
  /** Body lines before the first section (title, intro). */
  head: string[];
  sections: SkillSection[];
  /** Whether the text ended with a newline. */
  finalNewline: boolean;
}

const FENCE = /^\s*(```|~~~)/;
/** A section boundary: a heading of level 2 or deeper (the `#` title belongs to the head). */
const SECTION = /^#{2,6}\s+\S/;
/** A top-level list item: a bullet, a numbered item or a task box. */
const ITEM = /^([-*+]|\d{1,3}[.)])\s+(\[[ xX]\]\s+)?(\S.*)$/;

export function readSkill(text: string): SkillText {
  const block = splitFrontmatter(text);
  const front = block.yaml === null ? '' : text.slice(0, text.length - block.body.length);
  const finalNewline = block.body.endsWith('\n');
  const lines = (finalNewline ? block.body.slice(0, -1) : block.body).split('\n');
  const out: SkillText = { front, head: [], sections: [], finalNewline };
  let fenced = false;
  for (const line of block.body === '' ? [] : lines) {
    if (FENCE.test(line)) fenced = !fenced;
    if (!fenced && SECTION.test(line) && !FENCE.test(line)) out.sections.push({ heading: line, lines: [] });
    else (out.sections.at(-1)?.lines ?? out.head).push(line);
  }
  return out;
}

export function writeSkill(s: SkillText): string {
  const lines = [...s.head, ...s.sections.flatMap((x) => [x.heading, ...x.lines])];
  const body = lines.join('\n');
  return s.front + body + (s.finalNewline && lines.length ? '\n' : '');
}

/** A list item outside code: its text without the marker (and task box), or null. */
export function itemText(line: string): string | null {
  const m = ITEM.exec(line);
  return m ? m[3]!.trim() : null;
}

/** Indices of the lines of `lines` that are list items outside fenced code. */
export function itemLines(lines: readonly string[]): number[] {
  const out: number[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (FENCE.test(line)) fenced = !fenced;
    else if (!fenced && itemText(line) !== null) out.push(i);
  });
  return out;
}

/** Lines with blank runs collapsed to one and no blank line at either end. */
export function tidy(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines) if (l.trim() !== '' || (out.length > 0 && out.at(-1)!.trim() !== '')) out.push(l);
  while (out.length && out.at(-1)!.trim() === '') out.pop();
  return out;
}

/** A section's lines framed as the parser expects: one blank line after the heading and at the end. */
export function framed(lines: readonly string[]): string[] {
  const body = tidy(lines);
  return body.length ? ['', ...body, ''] : [''];
}

/** After sections moved or went: one blank line between parts and none at the end of the body. */
export function settle(s: SkillText): SkillText {
  const head = s.head[0]?.trim() === '' ? ['', ...tidy(s.head)] : tidy(s.head); // the line after the frontmatter stays
  const sections = s.sections.map((x, i) => {
    const lines = framed(x.lines);
    return { heading: x.heading, lines: i === s.sections.length - 1 ? lines.slice(0, -1) : lines };
  });
  if (sections.length && head.length) head.push('');
  return { ...s, head, sections };
}
