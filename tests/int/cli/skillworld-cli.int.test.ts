// `pskills skillworld generate` as a user runs it, then `pskills import` of the result with the real
// importer: every generated skill must be imported, none skipped. The TS checker must pass every
// reference the Python generator wrote. Needs training/.venv (the generator is Python).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../../common/skillworld/check';
import { trainingPython } from '../../../main/cli/eval';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const FILLER = join(process.cwd(), 'tests', 'fixtures', 'skillworld', 'filler');
const hasVenv = existsSync(trainingPython());
let tmp: string;

const pskills = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 110_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pskills-skillworld-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!hasVenv)('pskills skillworld generate (needs training/.venv)', () => {
  it('writes skills that the importer takes, every one, and tasks whose references pass the TS checker', () => {
    const out = join(tmp, 'world');
    const gen = pskills([
      'skillworld',
      'generate',
      '--split',
      'test',
      '--n',
      '13',
      '--seed',
      '4',
      '--out',
      out,
      '--filler',
      FILLER,
    ]);
    expect(gen.code, gen.err).toBe(0);
    expect(gen.out).toMatch(/skillworld test: 13 skills, 52 tasks/);
    const names = readdirSync(join(out, 'skills')).sort();
    expect(names).toHaveLength(13);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
      seed: number;
      split: string;
      counts: { tasks: number };
    };
    expect(manifest).toMatchObject({ seed: 4, split: 'test', counts: { tasks: 52 } });

    const imp = pskills(['import', out, '--data-dir', join(tmp, 'data'), '--json']);
    expect(imp.code, imp.err).toBe(0);
    expect(JSON.parse(imp.out)).toEqual({ imported: 13, unchanged: 0, skipped: [] });
    const listed = pskills(['skills', 'list', '--data-dir', join(tmp, 'data'), '--json']);
    expect((JSON.parse(listed.out) as { name: string }[]).map((s) => s.name).sort()).toEqual(names);

    const tasks = readFileSync(join(out, 'tasks.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { checker: unknown; reference: string; family: string });
    expect(new Set(tasks.map((t) => t.family))).toEqual(
      new Set(['format', 'codeword', 'tool_call', 'order', 'conditional', 'prohibition']),
    );
    for (const t of tasks) {
      expect(check(t.checker, t.reference), t.reference).toBe(true);
      expect(check(t.checker, '')).toBe(false);
    }
  });
});

describe('pskills skillworld: arguments', () => {
  it('says what is wrong before starting Python', () => {
    expect(pskills(['skillworld']).err).toMatch(/^pskills: usage: pskills skillworld generate --split/);
    expect(pskills(['skillworld', 'generate', '--split', 'dev', '--n', '3', '--out', tmp]).err).toMatch(
      /--split: "dev" is not one of train, val, test/,
    );
    expect(pskills(['skillworld', 'generate', '--split', 'test', '--n', '0', '--out', tmp]).err).toMatch(
      /--n: "0" is not a whole number/,
    );
    expect(
      pskills(['skillworld', 'generate', '--split', 'test', '--n', '2', '--out', tmp, '--filler', join(tmp, 'nope')])
        .err,
    ).toMatch(/--filler: .*nope: no such folder/);
    const r = pskills(['skillworld', 'generate', '--split', 'test', '--n', '2', '--out', tmp], {
      PSKILLS_PYTHON: join(tmp, 'no-venv', 'python'),
    });
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/training environment is missing .*setup_venv\.sh/);
  });
});
