// `pskills adapters|merge|ema` as a user runs them: child processes, JSON on stdout, one-line errors.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;
const ids: string[] = [];

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const json = <T>(...args: string[]): T => {
  const r = pskills(...args, '--json');
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as T;
};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-cli-adapters-'));
  await writeFixturePeft(join(dataDir, 'a'), 1);
  await writeFixturePeft(join(dataDir, 'b'), 2);
  await writeFixturePeft(join(dataDir, 'wrong'), 3, { shapes: [{ layer: 0, module: 'k', dIn: 64, dOut: 48 }] });
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('pskills adapters / merge / ema', () => {
  it('adapters import, list, show, export', () => {
    for (const dir of ['a', 'b']) {
      const r = json<{ adapter: string; rank: number; created: boolean }>(
        'adapters',
        'import',
        join(dataDir, dir),
        '--bundle',
        FIXTURE_BUNDLE,
      );
      expect(r).toMatchObject({ rank: 4, created: true });
      ids.push(r.adapter);
    }
    const list = json<{ id: string }[]>('adapters', 'list');
    expect(list.map((a) => a.id).sort()).toEqual([...ids].sort());
    const show = json<{ id: string; stats: { norms: { perTarget: unknown[] } } }>(
      'adapters',
      'show',
      ids[0]!.slice(0, 8),
    );
    expect(show.id).toBe(ids[0]);
    expect(show.stats.norms.perTarget).toHaveLength(14);
    const text = pskills('adapters', 'show', ids[0]!);
    expect(text.out).toMatch(/layer 1 down .*‖ΔW‖_F/);
    const out = join(dataDir, 'out');
    expect(pskills('adapters', 'export', ids[0]!, '--out', out).code).toBe(0);
    expect(
      ['adapter_config.json', 'adapter_model.safetensors', 'pskills.json'].every((f) => existsSync(join(out, f))),
    ).toBe(true);
  });

  it('merge --json prints the adapter id and rank', () => {
    expect(json('merge', ids[0]!, ids[1]!, '--method', 'cat')).toEqual({
      adapter: expect.stringMatching(/^[0-9a-f]{12}$/),
      rank: 8,
    });
    const svd = json<{ adapter: string; rank: number }>(
      'merge',
      ids[0]!,
      ids[1]!,
      '--method',
      'svd',
      '--rank',
      '3',
      '--weights',
      '0.5,0.5',
    );
    expect(svd.rank).toBe(3);
    expect(json('merge', ids[0]!, ids[1]!, '--method', 'svd', '--rank', '3', '--weights', '0.5,0.5')).toEqual(svd);
  });

  it('ema update, history, rollback', () => {
    expect(json('ema', 'update', ids[0]!)).toMatchObject({ version: 1, beta: 1, rank: 4 });
    expect(json('ema', 'update', ids[1]!, '--beta', '0.3', '--rank', '5')).toMatchObject({
      version: 2,
      beta: 0.3,
      rank: 5,
    });
    expect(json('ema', 'rollback', '1', '--bundle', FIXTURE_BUNDLE)).toMatchObject({
      version: 3,
      kind: 'rollback',
      restoresVersion: 1,
    });
    const h = json<{ versions: { version: number; kind: string }[] }>('ema', 'history', '--bundle', FIXTURE_BUNDLE);
    expect(h.versions.map((v) => [v.version, v.kind])).toEqual([
      [3, 'rollback'],
      [2, 'ema'],
      [1, 'ema'],
    ]);
  });

  it('errors: non-zero exit and one line on stderr', () => {
    const cases: [string[], RegExp][] = [
      [['adapters', 'show', 'ffffffffffff'], /no adapter/],
      [
        ['adapters', 'import', join(dataDir, 'wrong'), '--bundle', FIXTURE_BUNDLE],
        /layer 0, module "k": d_out 48, the bundle has 32/,
      ],
      [['adapters', 'export', ids[0]!], /--out DIR/],
      [['merge', ids[0]!, ids[1]!], /--method cat\|linear\|svd/],
      [['merge', ids[0]!, ids[1]!, '--method', 'cat', '--weights', '1,x'], /--weights: "x" is not a number/],
      [['merge', ids[0]!, ids[1]!, '--method', 'svd'], /svd needs a target rank/],
      [['merge', ids[0]!, ids[1]!, '--method', 'cat', '--rehearse', '2'], /comes from no skill version/],
      [['merge', ids[0]!, ids[1]!, '--method', 'cat', '--rehearse', 'x'], /--rehearse/],
      [['ema', 'rollback', '9', '--bundle', FIXTURE_BUNDLE], /no global adapter version 9/],
      [['ema', 'history', '--bundle', join(dataDir, 'no-bundle')], /no-bundle/],
      [['ema', 'frobnicate'], /usage: pskills ema/],
    ];
    for (const [args, message] of cases) {
      const r = pskills(...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.err.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.err, args.join(' ')).toMatch(/^pskills: /);
      expect(r.err, args.join(' ')).toMatch(message);
    }
  });
});
