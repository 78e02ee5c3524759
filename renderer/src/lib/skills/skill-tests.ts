// The Tests tab's rows: a skill version's verifier tests as form rows (prompt + exact / contains /
// regex / JSON Schema) and back, checked with the contract's own SavedTestSet schema so the tab refuses
// what verify.setTests would, naming the row and the field. Tests the form cannot edit (chat
// messages, SkillWorld checkers such as tool_call or order) ride along unchanged as `fixed`.
import { SavedTestSet, type VerifierTest } from '../../../../common/api/verify-schemas';
import { describeExpect } from '../../../../common/verify/describe';
import type { Expect } from '../../../../common/verify/expect';

export const EDITABLE_KINDS = ['exact', 'contains', 'regex', 'json_schema'] as const;
export type EditableKind = (typeof EDITABLE_KINDS)[number];

export const KIND_LABELS: Record<EditableKind, string> = {
  exact: 'is exactly',
  contains: 'contains',
  regex: 'matches regex',
  json_schema: 'is JSON matching schema',
};

export interface TestRow {
  /** Stable within the editor (rows can be renamed, so not the test id). */
  key: number;
  id: string;
  prompt: string;
  kind: EditableKind;
  /** exact / contains: the text; regex: the pattern; json_schema: the schema as JSON text. */
  value: string;
  /** exact, contains */
  ignoreCase: boolean;
  /** contains: only as a whole word */
  word: boolean;
  /** regex: any of i, m, s */
  flags: string;
  /** '' = verify.run's default */
  maxTokens: string;
  /** A test this form does not edit, kept as stored (it can still be deleted). */
  fixed: VerifierTest | null;
}

export interface RowProblem {
  /** 0-based row index */
  row: number;
  id: string;
  /** e.g. "prompt", "expect.pattern" */
  field: string;
  message: string;
}

const isEditable = (t: VerifierTest): boolean =>
  t.prompt !== undefined && (EDITABLE_KINDS as readonly string[]).includes(t.expect.kind);

export function rowFromTest(t: VerifierTest, key: number): TestRow {
  const row: TestRow = {
    key,
    id: t.id,
    prompt: t.prompt ?? '',
    kind: 'contains',
    value: '',
    ignoreCase: false,
    word: false,
    flags: '',
    maxTokens: t.maxTokens === undefined ? '' : String(t.maxTokens),
    fixed: null,
  };
  if (!isEditable(t)) return { ...row, fixed: t };
  const e = t.expect;
  if (e.kind === 'exact') return { ...row, kind: 'exact', value: e.value, ignoreCase: e.ignore_case ?? false };
  if (e.kind === 'contains')
    return { ...row, kind: 'contains', value: e.value, ignoreCase: e.ignore_case ?? false, word: e.word ?? false };
  if (e.kind === 'regex') return { ...row, kind: 'regex', value: e.pattern, flags: e.flags ?? '' };
  if (e.kind === 'json_schema') return { ...row, kind: 'json_schema', value: JSON.stringify(e.schema, null, 2) };
  return { ...row, fixed: t };
}

/** A new row whose id no other row has. */
export function blankRow(key: number, rows: readonly TestRow[]): TestRow {
  const ids = new Set(rows.map((r) => r.id));
  let n = rows.length + 1;
  while (ids.has(`test-${n}`)) n++;
  return {
    key,
    id: `test-${n}`,
    prompt: '',
    kind: 'contains',
    value: '',
    ignoreCase: false,
    word: false,
    flags: '',
    maxTokens: '',
    fixed: null,
  };
}

function expectOf(row: TestRow): Expect | { problem: string } {
  switch (row.kind) {
    case 'exact':
      return { kind: 'exact', value: row.value, ...(row.ignoreCase && { ignore_case: true }) };
    case 'contains':
      return {
        kind: 'contains',
        value: row.value,
        ...(row.ignoreCase && { ignore_case: true }),
        ...(row.word && { word: true }),
      };
    case 'regex':
      return { kind: 'regex', pattern: row.value, ...(row.flags && { flags: row.flags }) };
    case 'json_schema': {
      let schema: unknown;
      try {
        schema = JSON.parse(row.value);
      } catch (e) {
        return { problem: `not JSON: ${(e as Error).message}` };
      }
      return { kind: 'json_schema', schema: schema as Record<string, unknown> };
    }
  }
}

/** The test a row makes (unchecked), or the problem that stops it being made. */
export function testFromRow(row: TestRow): { test: VerifierTest } | { field: string; message: string } {
  if (row.fixed) return { test: { ...row.fixed, id: row.id } };
  const expect = expectOf(row);
  if ('problem' in expect) return { field: 'expect.schema', message: expect.problem };
  const tokens = row.maxTokens.trim();
  if (tokens !== '' && !/^\d+$/.test(tokens)) return { field: 'maxTokens', message: 'must be a whole number' };
  return {
    test: { id: row.id, prompt: row.prompt, expect, ...(tokens !== '' && { maxTokens: Number(tokens) }) },
  };
}

/** The rows as a test set verify.setTests accepts, or every problem, by row and field. */
export function validateRows(rows: readonly TestRow[]): { tests: VerifierTest[] | null; problems: RowProblem[] } {
  const problems: RowProblem[] = [];
  const tests: VerifierTest[] = [];
  rows.forEach((row, i) => {
    const r = testFromRow(row);
    if ('test' in r) tests.push(r.test);
    else problems.push({ row: i, id: row.id, ...r });
  });
  if (problems.length) return { tests: null, problems };
  const parsed = SavedTestSet.safeParse(tests);
  if (parsed.success) return { tests: parsed.data, problems: [] };
  for (const issue of parsed.error.issues) {
    const [row, ...rest] = issue.path;
    if (typeof row !== 'number') {
      problems.push({ row: -1, id: '', field: 'tests', message: issue.message });
      continue;
    }
    problems.push({ row, id: rows[row]?.id ?? '', field: rest.join('.') || 'test', message: issue.message });
  }
  return { tests: null, problems };
}

/** A problem as a person reads it: which row, which field, what is wrong. */
export function problemText(p: RowProblem): string {
  if (p.row < 0) return `${p.field}: ${p.message}`;
  return `Test ${p.row + 1}${p.id ? ` ("${p.id}")` : ''}, ${p.field}: ${p.message}`;
}

/** Rows compared by content (not key): whether the editor differs from what was loaded or saved. */
export function rowsSignature(rows: readonly TestRow[]): string {
  return JSON.stringify(rows.map(({ key: _key, ...rest }) => rest));
}

/** What a test expects, in a line (for the results and the read-only rows). */
export const expectSummary = describeExpect;

/** The task of a test in a line: its prompt, or its chat's last user message. */
export function taskSummary(t: VerifierTest): string {
  if (t.prompt !== undefined) return t.prompt;
  const last = [...(t.messages ?? [])].reverse().find((m) => m.role === 'user');
  return last ? last.content : `${t.messages?.length ?? 0} messages`;
}
