// Section tree from markdown headings. mdast parses the body, so a '# comment' inside a fenced code
// block is code, not a heading.
import { fromMarkdown } from 'mdast-util-from-markdown';
import type { Section } from '../../common/api/skill-schemas';

interface Node {
  type: string;
  value?: string;
  alt?: string | null;
  depth?: number;
  children?: Node[];
  position?: { start: { line: number } };
}

/**
 * @param bodyStartLine file line on which `body` starts
 * @param lastLine last line of the file; the final section ends there
 */
export function buildSections(body: string, bodyStartLine: number, lastLine: number): Section[] {
  const root = fromMarkdown(body) as Node;
  const headings = (root.children ?? []).filter((n) => n.type === 'heading' && n.position);
  const flat = headings.map((h) => ({
    heading: textOf(h).trim(),
    level: h.depth ?? 1,
    startLine: (h.position?.start.line ?? 1) + bodyStartLine - 1,
  }));
  const top: Section[] = [];
  const open: Section[] = []; // ancestors of the next heading, outermost first
  flat.forEach((h, i) => {
    const next = flat.slice(i + 1).find((n) => n.level <= h.level);
    const section: Section = { ...h, endLine: Math.max(h.startLine, next ? next.startLine - 1 : lastLine), children: [] };
    while (open.length > 0 && (open[open.length - 1]?.level ?? 0) >= h.level) open.pop();
    const parent = open[open.length - 1];
    (parent ? parent.children : top).push(section);
    open.push(section);
  });
  return top;
}

function textOf(node: Node): string {
  if (typeof node.value === 'string' && node.type !== 'html') return node.value;
  if (node.type === 'image') return node.alt ?? '';
  return (node.children ?? []).map(textOf).join('');
}
