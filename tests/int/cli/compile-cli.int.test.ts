// `pskills compile`, `pskills compare` and `pskills eval` as a user runs them: a child process,
// JSON on stdout (the stable shapes), progress on stderr, one-line errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HYPER_BUNDLE, SKILLS, TINY_BUNDLE } from '../compile/fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;
let src: string;

const pskills = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = spawnSync(process.execPath, [BIN, args[0]!, '--data-dir', dataDir, ...args.slice(1)], {
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-compile-cli-'));
  src = mkdtempSync(join(tmpdir(), 'pskills-compile-cli-src-'));
  for (const name of ['review-branch', 'sql-review'] as const) {
    mkdirSync(join(src, name));
    writeFileSync(join(src, name, 'SKILL.md'), SKILLS[name]);
  }
  expect(pskills(['import', src, '--json']).code).toBe(0);
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

describe('pskills compile', () => {
  it('--json prints {adapter, rank, ms}; the same skill again gives the same adapter', () => {
    const r = pskills(['compile', 'sql-review', '--bundle', HYPER_BUNDLE, '--json']);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { adapter: string; rank: number; ms: number; cached: boolean };
    expect(out.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(out.rank % 2).toBe(0);
    expect(out.ms).toBeGreaterThan(0);
    expect(out.cached).toBe(false);
    const again = JSON.parse(
      pskills(['compile', 'sql-review@1', '--bundle', HYPER_BUNDLE, '--json']).out,
    ) as typeof out;
    expect(again).toMatchObject({ adapter: out.adapter, rank: out.rank, cached: true });
  });

  it('prints progress on stderr and a summary without --json', () => {
    const r = pskills(['compile', 'review-branch', '--bundle', HYPER_BUNDLE]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/compiling review-branch@1: chunk 1\/\d+ \(\d+ tokens\)/);
    expect(r.out).toMatch(
      /^compiled review-branch@1 → adapter [0-9a-f]{12} \(rank \d+, \d+ chunks of \d+ tokens, \d+ ms\)/,
    );
  });

  it('errors name the skill and the bundle without a hypernetwork', () => {
    const unknown = pskills(['compile', 'nope', '--bundle', HYPER_BUNDLE]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toBe('pskills: no skill "nope"\n');
    const base = pskills(['compile', 'sql-review', '--bundle', TINY_BUNDLE]);
    expect(base.code).not.toBe(0);
    expect(base.err).toMatch(/^pskills: bundle tiny-random \(.*bundle-tiny\) has no hypernetwork/);
    expect(pskills(['compile']).code).toBe(2);
  });
});

describe('pskills compare', () => {
  it('--json prints the four columns', () => {
    const r = pskills([
      'compare',
      'sql-review',
      '--prompt',
      'How do I review a migration?',
      '--max-tokens',
      '6',
      '--bundle',
      HYPER_BUNDLE,
      '--json',
    ]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { columns: Record<string, unknown>[]; wrong_skill: { name: string } };
    expect(out.columns.map((c) => c.condition)).toEqual(['none', 'in_context', 'instant', 'wrong_skill']);
    for (const c of out.columns) {
      expect(Object.keys(c)).toEqual(
        expect.arrayContaining(['condition', 'text', 'prompt_tokens', 'ttft_ms', 'tokens_per_s']),
      );
      expect(typeof c.text).toBe('string');
      expect(c.prompt_tokens).toBeGreaterThan(0);
    }
    expect(out.wrong_skill.name).toBe('review-branch');
  });

  it('--conditions takes the old name parametric for instant', () => {
    const r = pskills([
      'compare',
      'sql-review',
      '--prompt',
      'How do I review a migration?',
      '--conditions',
      'parametric,none',
      '--max-tokens',
      '2',
      '--bundle',
      HYPER_BUNDLE,
      '--json',
    ]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { columns: { condition: string }[] };
    expect(out.columns.map((c) => c.condition)).toEqual(['instant', 'none']);
  });

  it('says what is wrong with its arguments', () => {
    expect(pskills(['compare', 'sql-review']).err).toMatch(/^pskills: usage: pskills compare/);
    expect(pskills(['compare', 'sql-review', '--prompt', 'x', '--conditions', 'none,bogus']).err).toMatch(
      /--conditions: "bogus" is not one of none, in_context, instant, /,
    );
    expect(pskills(['compare', 'sql-review', '--prompt', 'x', '--max-tokens', '0']).err).toMatch(
      /--max-tokens: "0" is not an integer ≥ 1/,
    );
  });
});

describe('pskills eval', () => {
  it('tells the user to set up the training venv when it is missing', () => {
    const r = pskills(['eval', '--skills', src, '--out', join(dataDir, 'eval.json'), '--bundle', HYPER_BUNDLE], {
      PSKILLS_PYTHON: join(dataDir, 'no-venv', 'python'),
    });
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(
      /^pskills: the training environment is missing \(.*no-venv\/python\); run `bash training\/setup_venv\.sh` first/,
    );
  });

  it('checks its arguments first', () => {
    expect(pskills(['eval', '--skills', src]).err).toMatch(
      /^pskills: usage: pskills eval \(--skills DIR \| --suite skillworld \[--n N\]\) --out FILE\.json/,
    );
    expect(pskills(['eval', '--suite', 'skillworld', '--skills', src, '--out', 'x.json']).err).toMatch(
      /^pskills: usage: pskills eval/,
    );
    expect(pskills(['eval', '--suite', 'bogus', '--out', 'x.json']).err).toMatch(
      /--suite: "bogus" is not one of skills, skillworld/,
    );
    expect(pskills(['eval', '--skills', src, '--n', '5', '--out', 'x.json']).err).toMatch(
      /--n goes with --suite skillworld/,
    );
    expect(pskills(['eval', '--suite', 'skillworld', '--n', '0', '--out', 'x.json']).err).toMatch(
      /--n: "0" is not an integer ≥ 1/,
    );
    expect(pskills(['eval', '--skills', join(src, 'missing'), '--out', 'x.json']).err).toMatch(
      /--skills: .*missing: no such folder/,
    );
    expect(pskills(['eval', '--skills', src, '--out', 'x.json', '--bundle', src]).err).toMatch(
      /--bundle: .*: no bundle\.json there/,
    );
  });

  it('runs the Python module with the arguments and passes its exit status on', () => {
    // A stand-in interpreter that prints its arguments: the command line pskills builds.
    const fake = join(dataDir, 'fake-python');
    writeFileSync(fake, '#!/bin/sh\necho "args: $*"\nexit 3\n', { mode: 0o755 });
    const r = pskills(
      ['eval', '--skills', src, '--out', join(dataDir, 'eval.json'), '--bundle', HYPER_BUNDLE, '--', '--limit', '2'],
      { PSKILLS_PYTHON: fake },
    );
    expect(r.out).toBe(
      `args: -m pskills_train.evals --skills ${src} --out ${join(dataDir, 'eval.json')} --bundle ${HYPER_BUNDLE} --limit 2\n`,
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/pskills_train\.evals exited with status 3/);
    const sw = pskills(
      [
        'eval',
        '--suite',
        'skillworld',
        '--n',
        '7',
        '--seed',
        '0',
        '--out',
        join(dataDir, 'sw.json'),
        '--bundle',
        HYPER_BUNDLE,
      ],
      { PSKILLS_PYTHON: fake },
    );
    expect(sw.out).toBe(
      `args: -m pskills_train.evals --suite skillworld --n 7 --seed 0 --out ${join(dataDir, 'sw.json')} --bundle ${HYPER_BUNDLE}\n`,
    );
  });
});
