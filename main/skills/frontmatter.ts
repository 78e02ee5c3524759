// Splits SKILL.md into YAML frontmatter and body, and reads the fields the Agent Skills spec names
// (https://agentskills.io/specification). Every problem becomes a Diagnostic with a file line.
import { isMap, isScalar, parseDocument } from 'yaml';
import type { Diagnostic, Frontmatter } from '../../common/api/skill-schemas';
import { countLines, lineOfOffset, lineStarts } from './lines';

export interface FrontmatterBlock {
  yaml: string | null; // null when the frontmatter is missing or never closed
  body: string;
  bodyStartLine: number;
  diagnostics: Diagnostic[];
}

export interface FrontmatterRead {
  frontmatter: Frontmatter;
  fieldLines: Map<string, number>; // field name → line of its key
  invalidFields: Set<string>; // fields with a type error (already reported)
  ok: boolean; // false when the block could not be read as a mapping
  diagnostics: Diagnostic[];
}

const FENCE = /^---[ \t]*$/;
const STRING_FIELDS = ['name', 'description', 'license', 'compatibility'] as const;

export function splitFrontmatter(content: string): FrontmatterBlock {
  const starts = lineStarts(content);
  const lineText = (i: number): string =>
    content.slice(starts[i], starts[i + 1] ?? content.length).replace(/(\r\n|\n|\r)$/, '');
  if (!FENCE.test(lineText(0).replace(/^\uFEFF/, ''))) {
    return {
      yaml: null,
      body: content,
      bodyStartLine: 1,
      diagnostics: [
        error('frontmatter-missing', "SKILL.md must start with a '---' line that opens the YAML frontmatter", 1),
      ],
    };
  }
  for (let i = 1; i < starts.length; i++) {
    if (i === starts.length - 1 && starts[i] === content.length) break; // empty tail after a final newline
    if (FENCE.test(lineText(i))) {
      return {
        yaml: content.slice(starts[1], starts[i]),
        body: content.slice(starts[i + 1] ?? content.length),
        bodyStartLine: i + 2,
        diagnostics: [],
      };
    }
  }
  return {
    yaml: null,
    body: '',
    bodyStartLine: countLines(content) + 1,
    diagnostics: [
      error('frontmatter-unterminated', "the frontmatter opened on line 1 is never closed by a '---' line", 1),
    ],
  };
}

/** `firstLine` is the file line on which `yamlText` starts. */
export function readFrontmatter(yamlText: string, firstLine: number): FrontmatterRead {
  const starts = lineStarts(yamlText);
  const where = (offset: number) => {
    const line = lineOfOffset(starts, offset);
    return { line: firstLine - 1 + line, column: offset - (starts[line - 1] ?? 0) + 1 };
  };
  const empty: Frontmatter = { extra: {} };
  const fieldLines = new Map<string, number>();
  const doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  const diagnostics: Diagnostic[] = doc.warnings.map((w) => ({
    severity: 'warning' as const,
    code: 'yaml-warning',
    message: `YAML: ${w.message}`,
    ...where(w.pos[0]),
  }));
  if (doc.errors.length > 0) {
    for (const e of doc.errors)
      diagnostics.push({ ...error('yaml-invalid', `invalid YAML: ${e.message}`, 1), ...where(e.pos[0]) });
    return { frontmatter: empty, fieldLines, invalidFields: new Set(), ok: false, diagnostics };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    diagnostics.push(error('yaml-invalid', `invalid YAML: ${e instanceof Error ? e.message : String(e)}`, firstLine));
    return { frontmatter: empty, fieldLines, invalidFields: new Set(), ok: false, diagnostics };
  }
  if (value === null || value === undefined) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    const got = Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    diagnostics.push(
      error('frontmatter-not-mapping', `the frontmatter must be a mapping of fields, got ${got}`, firstLine),
    );
    return { frontmatter: empty, fieldLines, invalidFields: new Set(), ok: false, diagnostics };
  }
  if (isMap(doc.contents)) {
    for (const pair of doc.contents.items) {
      if (isScalar(pair.key) && pair.key.range) fieldLines.set(String(pair.key.value), where(pair.key.range[0]).line);
    }
  }
  const fields = value as Record<string, unknown>;
  const lineOf = (field: string) => fieldLines.get(field) ?? firstLine;
  const frontmatter: Frontmatter = { extra: {} };
  for (const [key, v] of Object.entries(fields)) {
    if ((STRING_FIELDS as readonly string[]).includes(key)) {
      if (typeof v === 'string') frontmatter[key as (typeof STRING_FIELDS)[number]] = v;
      else if (v !== null) diagnostics.push(typeError(key, 'a string', v, lineOf(key)));
    } else if (key === 'metadata') {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) frontmatter.metadata = v as Record<string, unknown>;
      else if (v !== null) diagnostics.push(typeError(key, 'a mapping', v, lineOf(key)));
    } else if (key === 'allowed-tools') {
      if (typeof v === 'string') frontmatter.allowedTools = splitTools(v);
      else if (Array.isArray(v) && v.every((t) => typeof t === 'string')) frontmatter.allowedTools = v;
      else if (v !== null)
        diagnostics.push(typeError(key, 'a space-separated string or a list of strings', v, lineOf(key)));
    } else {
      // Defined, not assigned: a key named "__proto__" stays a key instead of becoming the prototype.
      Object.defineProperty(frontmatter.extra, key, { value: v, enumerable: true, writable: true, configurable: true });
    }
  }
  const invalidFields = new Set(diagnostics.flatMap((d) => (d.field ? [d.field] : [])));
  return { frontmatter, fieldLines, invalidFields, ok: true, diagnostics };
}

/** "Read Bash(git add:*)" → ["Read", "Bash(git add:*)"]: spaces inside parentheses belong to the tool. */
export function splitTools(text: string): string[] {
  const tools: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && /[\s,]/.test(ch)) {
      if (current) tools.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current) tools.push(current);
  return tools;
}

function typeError(field: string, expected: string, got: unknown, line: number): Diagnostic {
  const kind = Array.isArray(got) ? 'a list' : typeof got === 'object' ? 'a mapping' : `a ${typeof got}`;
  return { ...error('field-type', `field '${field}' must be ${expected}, got ${kind}`, line), field };
}

function error(code: string, message: string, line: number): Diagnostic {
  return { severity: 'error', code, message, line };
}
