// The Tests tab's and the Continual page's pure parts: rows ↔ verifier tests, validation with the
// contract's schema (problems named by row and field), the routes, the continual form's checks and
// the global versions a run wrote.
import { describe, expect, it } from 'vitest';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { continualInput, DEFAULT_FORM, globalVersions } from '../../../renderer/src/lib/continual/continual-run';
import { formatRoute, parseRoute } from '../../../renderer/src/lib/shared/routes';
import {
  blankRow,
  expectSummary,
  problemText,
  rowFromTest,
  rowsSignature,
  validateRows,
  type TestRow,
} from '../../../renderer/src/lib/skills/skill-tests';
import { verifyProgress, type VerifySnapshot } from '../../../renderer/src/lib/skills/verify-run';

const TESTS: VerifierTest[] = [
  { id: 'exact', prompt: 'Say hi', expect: { kind: 'exact', value: 'hi', ignore_case: true } },
  { id: 'word', prompt: 'Name it', expect: { kind: 'contains', value: 'tar', word: true } },
  { id: 'rx', prompt: 'List it', expect: { kind: 'regex', pattern: 'tar -[a-z]*t', flags: 'i' }, maxTokens: 12 },
  {
    id: 'json',
    prompt: 'JSON please',
    expect: { kind: 'json_schema', schema: { type: 'object', required: ['command'] } },
  },
  {
    id: 'tool',
    messages: [{ role: 'user', content: 'Book it' }],
    expect: { kind: 'tool_call', name: 'book', args: { day: 'monday' } },
  },
  { id: 'order', prompt: 'Steps?', expect: { kind: 'order', items: ['read', 'write'] } },
];

const rows = (tests: VerifierTest[]): TestRow[] => tests.map((t, i) => rowFromTest(t, i + 1));

describe('test rows', () => {
  it('round-trip every kind: the four the form edits and the read-only ones unchanged', () => {
    const r = rows(TESTS);
    expect(r.map((x) => x.fixed !== null)).toEqual([false, false, false, false, true, true]);
    expect(r[2]).toMatchObject({ kind: 'regex', value: 'tar -[a-z]*t', flags: 'i', maxTokens: '12' });
    expect(r[3]!.value).toContain('"required"');
    const v = validateRows(r);
    expect(v.problems).toEqual([]);
    expect(v.tests).toEqual(TESTS);
  });

  it('names the row and the field of every problem, and builds nothing then', () => {
    const r = rows(TESTS.slice(0, 4));
    r[0] = { ...r[0]!, prompt: '' };
    r[1] = { ...r[1]!, id: 'exact' };
    r[2] = { ...r[2]!, value: 'tar (' };
    r[3] = { ...r[3]!, value: '{"type": ' };
    const json = validateRows(r);
    expect(json.tests).toBeNull();
    // A row that is not even JSON is reported alone first (the schema check needs every row built).
    expect(json.problems.map(problemText)).toEqual([
      expect.stringMatching(/^Test 4 \("json"\), expect\.schema: not JSON/),
    ]);
    r[3] = { ...r[3]!, value: '{"type": "nope"}' };
    const texts = validateRows(r).problems.map(problemText);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Test 1 \("exact"\), prompt: /),
        'Test 2 ("exact"), id: test id "exact" is used twice',
        'Test 3 ("rx"), expect.pattern: unbalanced \'(\'',
        expect.stringMatching(/^Test 4 \("json"\), expect\.schema: not a JSON Schema this studio can check/),
      ]),
    );
    r[2] = { ...r[2]!, value: 'x', flags: 'gg' };
    expect(validateRows(r).problems.map(problemText)).toContain(
      `Test 3 ("rx"), expect.flags: must be distinct letters of 'ims'`,
    );
    r[2] = { ...r[2]!, flags: '', maxTokens: 'many' };
    expect(validateRows(r).problems.map(problemText)).toContain('Test 3 ("rx"), maxTokens: must be a whole number');
  });

  it('a new row has an unused id, is empty (so it needs a prompt and a value) and changes the signature', () => {
    const r = rows(TESTS.slice(0, 2));
    const before = rowsSignature(r);
    const added = blankRow(9, [...r, { ...r[0]!, id: 'test-3' }]);
    expect(added.id).toBe('test-4');
    const problems = validateRows([...r, added]).problems.map((p) => `${p.row}:${p.field}`);
    expect(problems).toEqual(['2:prompt', '2:expect.value']);
    expect(rowsSignature([...r, added])).not.toBe(before);
    // Keys do not count: the same content reloaded is not an edit.
    expect(rowsSignature(r.map((x) => ({ ...x, key: x.key + 100 })))).toBe(before);
  });

  it('says what each test expects in a line', () => {
    expect(TESTS.map((t) => expectSummary(t.expect))).toEqual([
      'is exactly "hi" (any case)',
      'contains the word "tar"',
      'matches /tar -[a-z]*t/i',
      'is JSON matching a schema',
      'calls book(day)',
      'names "read" then "write"',
    ]);
  });
});

describe('verify progress', () => {
  const base: VerifySnapshot = {
    status: 'running',
    mode: 'instant',
    adapter: null,
    compile: null,
    total: null,
    outcomes: [],
    result: null,
    error: null,
    cancelling: false,
  };
  it('shows the compile, then the tests answered', () => {
    expect(verifyProgress(base)).toEqual({ text: 'Starting…', fraction: null });
    expect(verifyProgress({ ...base, compile: { chunk: 1, chunks: 3 } }).text).toBe('Compiling: chunk 1 of 3');
    const answered = { ...base, total: 4, outcomes: [{ index: 0, id: 'a', passed: true }] };
    expect(verifyProgress(answered)).toEqual({ text: '1 of 4 tests answered', fraction: 0.25 });
  });
});

describe('routes of the Tests tab and the Continual page', () => {
  it('round-trip', () => {
    expect(parseRoute('#/skill/tar-archives/tests')).toEqual({
      page: 'skill',
      name: 'tar-archives',
      version: null,
      view: 'tests',
    });
    expect(parseRoute('#/skill/tar-archives/v/2/tests')).toMatchObject({ version: 2, view: 'tests' });
    expect(formatRoute({ page: 'skill', name: 'tar-archives', version: 2, view: 'tests' })).toBe(
      '#/skill/tar-archives/v/2/tests',
    );
    expect(parseRoute('#/continual')).toEqual({ page: 'continual' });
    expect(formatRoute({ page: 'continual' })).toBe('#/continual');
  });
});

describe('the continual form', () => {
  it('makes the request with only the fields given', () => {
    expect(continualInput({ ...DEFAULT_FORM, episodes: 2, seed: 7, mode: 'cat' })).toEqual({
      input: { suite: 'skillworld', episodes: 2, seed: 7, mode: 'cat', tier: 'distilled' },
    });
    expect(continualInput({ ...DEFAULT_FORM, episodes: 2, beta: 0.5, demos: 2 })).toEqual({
      input: { suite: 'skillworld', episodes: 2, seed: 0, mode: 'merge', beta: 0.5, demos: 2, tier: 'distilled' },
    });
  });

  it('names each field it refuses', () => {
    expect(continualInput({ ...DEFAULT_FORM, episodes: null })).toEqual({ problems: ['Episodes: required'] });
    const r = continualInput({ ...DEFAULT_FORM, episodes: 0, beta: 2, tasks: 1.5 });
    expect('problems' in r && r.problems).toEqual([
      'Episodes must be at least 1.',
      'Blend weight of each lesson must be at most 1.',
      'Tasks per lesson must be a whole number.',
    ]);
  });

  it('lists each global version once, with the episode that wrote it', () => {
    expect(
      globalVersions([
        { episode: 1, passRate: 0, globalVersion: 4 },
        { episode: 2, passRate: 0.5, globalVersion: 5 },
        { episode: 3, passRate: 0.5, globalVersion: 5 },
        { episode: 4, passRate: 1, globalVersion: null },
      ]),
    ).toEqual([
      { episode: 1, version: 4 },
      { episode: 2, version: 5 },
    ]);
  });
});
