// parseSkillMd: SKILL.md text → frontmatter, section tree and line-numbered diagnostics. Total for
// every string: problems become diagnostics, never exceptions.
import type { Diagnostic, ParsedSkill } from '../../common/api/skill-schemas';
import { readFrontmatter, splitFrontmatter } from './frontmatter';
import { countLines } from './lines';
import { buildSections } from './sections';
import { checkBody, checkFields } from './validate';

export function parseSkillMd(content: string, opts: { folderName?: string } = {}): ParsedSkill {
  try {
    return parse(content, opts);
  } catch (e) {
    // Defensive: a parser bug must surface as a diagnostic, not crash an import of 700 files.
    const message = `internal parser error: ${e instanceof Error ? e.message : String(e)}`;
    return {
      frontmatter: { extra: {} },
      bodyStartLine: 1,
      body: content,
      sections: [],
      diagnostics: [{ severity: 'error', code: 'internal', message, line: 1 }],
    };
  }
}

function parse(content: string, opts: { folderName?: string }): ParsedSkill {
  const block = splitFrontmatter(content);
  const diagnostics: Diagnostic[] = [...block.diagnostics];
  let frontmatter: ParsedSkill['frontmatter'] = { extra: {} };
  if (block.yaml !== null) {
    const read = readFrontmatter(block.yaml, 2);
    frontmatter = read.frontmatter;
    diagnostics.push(...read.diagnostics);
    if (read.ok) diagnostics.push(...checkFields(frontmatter, read, opts));
  }
  const lastLine = Math.max(1, countLines(content));
  const bodyLines = countLines(block.body);
  if (block.yaml !== null || block.body !== '') {
    diagnostics.push(...checkBody(block.body, Math.min(block.bodyStartLine, lastLine), bodyLines));
  }
  return {
    frontmatter,
    bodyStartLine: block.bodyStartLine,
    body: block.body,
    sections: buildSections(block.body, block.bodyStartLine, lastLine),
    diagnostics: diagnostics.sort((a, b) => a.line - b.line),
  };
}
