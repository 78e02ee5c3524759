// Section tree from markdown headings. A real markdown lexer (marked) reads the body, so a
// '# comment' inside a fenced code block is code, not a heading. marked, not micromark: on the
// whole pinned skill list micromark took ~70 % of import time (bench/import).
import { Lexer, type Token, type Tokens } from 'marked';
import type { Section } from '../../common/api/skill-schemas';

/**
 * @param bodyStartLine file line on which `body` starts
 * @param lastLine last line of the file; the final section ends there
 */
export function buildSections(body: string, bodyStartLine: number, lastLine: number): Section[] {
  const flat: { heading: string; level: number; startLine: number }[] = [];
  let line = bodyStartLine;
  for (const token of new Lexer({ gfm: true }).lex(body.replace(/\r\n?/g, '\n'))) {
    if (token.type === 'heading') {
      const h = token as Tokens.Heading;
      flat.push({
        heading: textOf(h.tokens)
          .split('\n')
          .map((l) => l.trim())
          .join('\n')
          .trim(),
        level: h.depth,
        startLine: line + leadingBlankLines(h.raw),
      });
    }
    line += (token.raw.match(/\n/g) ?? []).length;
  }
  const top: Section[] = [];
  const open: Section[] = []; // ancestors of the next heading, outermost first
  flat.forEach((h, i) => {
    const next = flat.slice(i + 1).find((n) => n.level <= h.level);
    const section: Section = {
      ...h,
      endLine: Math.max(h.startLine, next ? next.startLine - 1 : lastLine),
      children: [],
    };
    while (open.length > 0 && (open[open.length - 1]?.level ?? 0) >= h.level) open.pop();
    const parent = open[open.length - 1];
    (parent ? parent.children : top).push(section);
    open.push(section);
  });
  return top;
}

function leadingBlankLines(raw: string): number {
  return (/^\n*/.exec(raw)?.[0] ?? '').length;
}

function textOf(tokens: readonly Token[] | undefined): string {
  return (tokens ?? [])
    .map((t) => {
      if (t.type === 'html') return '';
      if ('tokens' in t && t.tokens && t.type !== 'codespan') return textOf(t.tokens);
      return 'text' in t && typeof t.text === 'string' ? t.text : '';
    })
    .join('');
}
