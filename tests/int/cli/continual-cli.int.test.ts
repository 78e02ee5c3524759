// `pskills continual run` as a user runs it: a child process on the bundle-hyper fixture, the JSON
// shape issue 13 names on stdout, a table without --json, and one-line errors for bad flags.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HYPER_BUNDLE } from '../compile/fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const small = ['--suite', 'skillworld', '--episodes', '2', '--demos', '1', '--tasks', '1', '--max-tokens', '4'];

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-continual-cli-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('pskills continual run', () => {
  it('--json prints {mode, episodes: [{episode, pass_rate, global_version}], final_pass_rate}', () => {
    const r = pskills('continual', 'run', ...small, '--mode', 'cat', '--seed', '3', '--bundle', HYPER_BUNDLE, '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as {
      mode: string;
      episodes: { episode: number; pass_rate: number; global_version: number | null }[];
      final_pass_rate: number;
      seed: number;
    };
    expect(j.mode).toBe('cat');
    expect(j.seed).toBe(3);
    expect(j.episodes.map((e) => [e.episode, e.global_version])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    for (const e of j.episodes) expect(e.pass_rate).toBeGreaterThanOrEqual(0);
    expect(j.final_pass_rate).toBe(j.episodes[1]!.pass_rate);
    const h = pskills('ema', 'history', '--bundle', HYPER_BUNDLE, '--json');
    expect((JSON.parse(h.out) as { versions: unknown[] }).versions).toHaveLength(2);
  });

  it('prints a table per episode without --json, progress on stderr', () => {
    const r = pskills('continual', 'run', ...small, '--mode', 'in_context', '--bundle', HYPER_BUNDLE);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^episode\tpass rate\tpassed\/n\tglobal\tlesson\n1\t\d\.\d{3}\t\d\/1\t-\tlesson-/);
    expect(r.out).toMatch(/in_context: final pass rate \d\.\d{3} over 2 held-out tasks/);
    expect(r.err).toMatch(/^episode 1\/2: /m);
  });

  it('refuses a bad mode, suite or count with a one-line error and status 2', () => {
    const mode = pskills('continual', 'run', ...small, '--mode', 'average');
    expect(mode.code).toBe(2);
    expect(mode.err).toBe('pskills: --mode: "average" is not one of merge, cat, linear, independent, in_context\n');
    const suite = pskills('continual', 'run', '--suite', 'humaneval', '--episodes', '2', '--mode', 'merge');
    expect(suite.code).toBe(2);
    expect(suite.err).toMatch(/--suite: "humaneval" is not one of skillworld/);
    const n = pskills('continual', 'run', '--suite', 'skillworld', '--episodes', '0', '--mode', 'merge');
    expect(n.code).toBe(2);
    expect(n.err).toMatch(/--episodes/);
    const usage = pskills('continual', 'run', '--mode', 'merge');
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/usage: pskills continual run --suite skillworld --episodes N/);
  });
});
