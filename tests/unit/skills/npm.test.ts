import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanNpm, type NpmRunner } from '../../../main/skills/sources/npm';
import { parseNpmSpec, tarballName } from '../../../main/skills/sources/npm-spec';
import { skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes } from '../../fixtures/skills/tar-bytes';

let cacheDir: string;
beforeEach(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'pskills-npm-'));
});
afterEach(() => rm(cacheDir, { recursive: true, force: true }));

/** Stands in for `npm pack`: writes the tarball where asked and prints npm's JSON. */
function fakeNpm(calls: string[][]): NpmRunner {
  return async (args) => {
    calls.push(args);
    const dest = args[args.indexOf('--pack-destination') + 1] ?? '';
    const bytes = tgzBytes([
      {
        path: 'package/package.json',
        body: JSON.stringify({ name: '@acme/skills', version: '1.2.3', license: 'Apache-2.0' }),
      },
      { path: 'package/skills/review/SKILL.md', body: skillMd({ name: 'review' }) },
    ]);
    const filename = tarballName('@acme/skills', '1.2.3');
    await writeFile(join(dest, filename), bytes);
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    return JSON.stringify([{ id: '@acme/skills@1.2.3', name: '@acme/skills', version: '1.2.3', integrity, filename }]);
  };
}
const noNetwork: NpmRunner = () => Promise.reject(new Error('npm must not run on a cache hit'));

describe('parseNpmSpec', () => {
  it('accepts names, scoped names, versions, ranges and tags', () => {
    expect(parseNpmSpec('cc-sdd')).toEqual({ name: 'cc-sdd', range: null, exactVersion: null });
    expect(parseNpmSpec('@plaited/development-skills@0.8.1')).toEqual({
      name: '@plaited/development-skills',
      range: '0.8.1',
      exactVersion: '0.8.1',
    });
    expect(parseNpmSpec('x@^1.2.0')).toMatchObject({ range: '^1.2.0', exactVersion: null });
    expect(parseNpmSpec('x@>=1 <2')).toMatchObject({ range: '>=1 <2' });
    expect(parseNpmSpec('x@next')).toMatchObject({ range: 'next', exactVersion: null });
    expect(parseNpmSpec('x@1.0.0-beta.127')).toMatchObject({ exactVersion: '1.0.0-beta.127' });
  });

  it('explains what is wrong with nonsense', () => {
    expect(parseNpmSpec('')).toMatch(/empty/);
    expect(parseNpmSpec('hello world')).toMatch(/not a folder, a \.tgz file or a valid npm package name/);
    expect(parseNpmSpec('@/x')).toMatch(/valid npm package name/);
    expect(parseNpmSpec('.hidden')).toMatch(/valid npm package name/);
    expect(parseNpmSpec('x@')).toMatch(/not a version, range or tag/);
    expect(parseNpmSpec('x@1.0;rm -rf')).toMatch(/not a version, range or tag/);
    expect(parseNpmSpec('git+https://github.com/a/b.git')).toMatch(/URL or protocol spec/);
  });

  it('names tarballs as npm pack does', () => {
    expect(tarballName('@plaited/development-skills', '0.8.1')).toBe('plaited-development-skills-0.8.1.tgz');
    expect(tarballName('cc-sdd', '3.0.2')).toBe('cc-sdd-3.0.2.tgz');
  });
});

describe('scanNpm', () => {
  it('packs into <cacheDir>/npm without scripts and records npm provenance', async () => {
    const calls: string[][] = [];
    const scan = await scanNpm('@acme/skills@1.2.3', { cacheDir, runNpm: fakeNpm(calls) });
    const dir = join(cacheDir, 'npm');
    expect(calls).toEqual([['pack', '@acme/skills@1.2.3', '--json', '--ignore-scripts', '--pack-destination', dir]]);
    expect(scan.cached).toBe(false);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['skills/review/SKILL.md']);
    expect(scan.candidates[0]?.provenanceBase).toEqual({
      kind: 'npm',
      package: '@acme/skills',
      version: '1.2.3',
      license: 'Apache-2.0',
      integrity: scan.pack.integrity,
    });
    expect(scan.pack.integrity).toMatch(/^sha512-/);
    const sidecar = JSON.parse(await readFile(join(dir, 'acme-skills-1.2.3.tgz.json'), 'utf8'));
    expect(sidecar).toEqual(scan.pack);
  });

  it('answers an exact version from the cache, and fetches again when the tarball no longer matches', async () => {
    const calls: string[][] = [];
    const first = await scanNpm('@acme/skills@1.2.3', { cacheDir, runNpm: fakeNpm(calls) });
    const again = await scanNpm('@acme/skills@1.2.3', { cacheDir, runNpm: noNetwork });
    expect(again.cached).toBe(true);
    expect(again.candidates).toEqual(first.candidates);
    await writeFile(join(cacheDir, 'npm', 'acme-skills-1.2.3.tgz'), 'tampered');
    const refetched = await scanNpm('@acme/skills@1.2.3', { cacheDir, runNpm: fakeNpm(calls) });
    expect(refetched.cached).toBe(false);
    expect(calls).toHaveLength(2);
  });

  it('always asks npm for a range or tag', async () => {
    const calls: string[][] = [];
    await scanNpm('@acme/skills@1.2.3', { cacheDir, runNpm: fakeNpm(calls) });
    await scanNpm('@acme/skills@^1', { cacheDir, runNpm: fakeNpm(calls) });
    await scanNpm('@acme/skills', { cacheDir, runNpm: fakeNpm(calls) });
    expect(calls.map((c) => c[1])).toEqual(['@acme/skills@1.2.3', '@acme/skills@^1', '@acme/skills']);
  });

  it("fails with npm's first stderr line and its JSON summary", async () => {
    const failing: NpmRunner = () =>
      Promise.reject(
        Object.assign(new Error('Command failed'), {
          stderr: 'npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nope\n',
          stdout: JSON.stringify({
            error: { code: 'E404', summary: 'Not Found - GET https://registry.npmjs.org/nope' },
          }),
        }),
      );
    await expect(scanNpm('nope@1.0.0', { cacheDir, runNpm: failing })).rejects.toMatchObject({
      code: 'import_failed',
      message: 'npm pack nope@1.0.0 failed: npm error code E404 (Not Found - GET https://registry.npmjs.org/nope)',
    });
  });

  it('rejects a malformed spec before running npm', async () => {
    await expect(scanNpm('not a package', { cacheDir, runNpm: noNetwork })).rejects.toMatchObject({
      code: 'import_failed',
    });
  });

  it('turns a cancelled npm run into an AbortError', async () => {
    const controller = new AbortController();
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hanging: NpmRunner = (_args, signal) =>
      new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () =>
          reject(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' })),
        );
        started();
      });
    const pending = scanNpm('x@1.0.0', { cacheDir, runNpm: hanging, signal: controller.signal });
    await running;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', message: 'import cancelled' });
    const before = new AbortController();
    before.abort();
    await expect(scanNpm('x@1.0.0', { cacheDir, runNpm: noNetwork, signal: before.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
