import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanTgz, unsafeReason } from '../../../main/skills/sources/tgz';
import { skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes, type TarEntry } from '../../fixtures/skills/tar-bytes';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pskills-tgz-'));
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

const PKG: TarEntry = {
  path: 'package/package.json',
  body: JSON.stringify({ name: '@acme/skills', version: '1.2.3', license: 'MIT' }),
};
const SKILL: TarEntry = { path: 'package/skills/review/SKILL.md', body: skillMd({ name: 'review' }) };

async function archive(entries: TarEntry[]): Promise<string> {
  const file = join(tmp, 'a.tgz');
  await writeFile(file, tgzBytes(entries));
  return file;
}

describe('scanTgz', () => {
  it('reads skills and package.json from npm pack layout without extracting', async () => {
    const file = await archive([
      { path: 'package/', type: 'dir' },
      SKILL,
      { path: 'package/skills/other/skill.md', body: skillMd({ name: 'other' }) },
      { path: 'package/README.md', body: '# readme' },
      PKG,
    ]);
    const scan = await scanTgz(file);
    expect(scan.pkg).toEqual({ name: '@acme/skills', version: '1.2.3', license: 'MIT' });
    expect(scan.candidates.map((c) => [c.relPath, c.folderName])).toEqual([
      ['skills/review/SKILL.md', 'review'],
      ['skills/other/skill.md', 'other'],
    ]);
    expect(scan.candidates[0]?.content).toBe(SKILL.body);
    expect(scan.candidates[0]?.provenanceBase).toEqual({
      kind: 'tgz',
      file,
      package: '@acme/skills',
      version: '1.2.3',
      license: 'MIT',
    });
    expect(scan.skipped).toEqual([]);
    expect(await readdir(tmp)).toEqual(['a.tgz']); // nothing extracted
  });

  it.each([
    ['../evil/SKILL.md', "escapes the archive root with '..'"],
    ['package/../../evil', "escapes the archive root with '..'"],
    ['/etc/cron.d/evil', 'has an absolute path'],
    ['C:/Windows/evil', 'has an absolute path'],
    ['package\\..\\..\\evil', "escapes the archive root with '..'"],
  ])('rejects the whole archive for an entry %s', async (path, why) => {
    const file = await archive([PKG, SKILL, { path, body: 'x' }]);
    const err = await scanTgz(file).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'StudioError', code: 'import_failed' });
    expect((err as Error).message).toBe(`${file} rejected: entry '${path}' ${why}; nothing was imported`);
  });

  it('rejects an escaping link entry and skips in-root link entries without following them', async () => {
    expect(unsafeReason('package/skills/SKILL.md')).toBeNull();
    const escaping = await archive([SKILL, { path: '../link', type: 'symlink', linkpath: '/etc/passwd' }]);
    await expect(scanTgz(escaping)).rejects.toMatchObject({
      code: 'import_failed',
      message: expect.stringContaining("'../link'"),
    });
    const file = await archive([
      PKG,
      SKILL,
      { path: 'package/skills/sym/SKILL.md', type: 'symlink', linkpath: '/etc/passwd' },
      { path: 'package/skills/hard/SKILL.md', type: 'hardlink', linkpath: 'package/skills/review/SKILL.md' },
    ]);
    const scan = await scanTgz(file);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['skills/review/SKILL.md']);
    expect(scan.skipped).toEqual([
      { path: 'skills/sym/SKILL.md', reason: 'symbolic link entry (→ /etc/passwd) not followed' },
      { path: 'skills/hard/SKILL.md', reason: 'hard link entry (→ package/skills/review/SKILL.md) not followed' },
    ]);
  });

  it('records device and FIFO entries as skipped, never dropping them silently', async () => {
    const file = await archive([
      PKG,
      SKILL,
      { path: 'package/skills/zero/SKILL.md', type: 'chardev' },
      { path: 'package/dev/sda', type: 'blockdev' },
      { path: 'package/skills/pipe/SKILL.md', type: 'fifo' },
    ]);
    const scan = await scanTgz(file);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['skills/review/SKILL.md']);
    expect(scan.skipped).toEqual([
      { path: 'skills/zero/SKILL.md', reason: 'character device entry; not a regular file, not read' },
      { path: 'dev/sda', reason: 'block device entry; not a regular file, not read' },
      { path: 'skills/pipe/SKILL.md', reason: 'FIFO entry; not a regular file, not read' },
    ]);
  });

  it('skips oversized, binary and invalid UTF-8 entries and keeps the rest', async () => {
    const file = await archive([
      PKG,
      { path: 'package/big/SKILL.md', body: 'x'.repeat(1024 * 1024 + 5) },
      { path: 'package/bin/SKILL.md', body: new Uint8Array([0x41, 0x00]) },
      { path: 'package/bad/SKILL.md', body: new Uint8Array([0x2d, 0x2d, 0xc3, 0x28]) },
      SKILL,
    ]);
    const scan = await scanTgz(file);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['skills/review/SKILL.md']);
    expect(scan.skipped).toEqual([
      { path: 'big/SKILL.md', reason: '1,048,581 bytes, over the 1 MiB limit for a SKILL.md; not read' },
      { path: 'bin/SKILL.md', reason: 'binary file (NUL byte at offset 1)' },
      { path: 'bad/SKILL.md', reason: 'invalid UTF-8 at byte offset 2' },
    ]);
  });

  it('names a SKILL.md at the package root after the package', async () => {
    const file = await archive([PKG, { path: 'package/SKILL.md', body: skillMd({ name: null }) }]);
    expect((await scanTgz(file)).candidates.map((c) => [c.relPath, c.folderName])).toEqual([['SKILL.md', 'skills']]);
    const bare = await archive([{ path: 'SKILL.md', body: skillMd() }]);
    expect((await scanTgz(bare)).candidates.map((c) => c.folderName)).toEqual(['a']);
  });

  it('keeps full paths when entries share no top folder, and tolerates a missing package.json', async () => {
    const file = await archive([
      { path: 'a/SKILL.md', body: skillMd() },
      { path: 'b/SKILL.md', body: skillMd() },
    ]);
    const scan = await scanTgz(file);
    expect(scan.pkg).toEqual({ name: null, version: null, license: null });
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['a/SKILL.md', 'b/SKILL.md']);
  });

  it('reads archives written by node-tar, long pax paths included', async () => {
    const src = join(tmp, 'src');
    const deep = join('package', 'skills', 'd'.repeat(60), 'e'.repeat(60));
    await mkdir(join(src, deep), { recursive: true });
    await writeFile(join(src, deep, 'SKILL.md'), skillMd({ name: 'e'.repeat(60) }));
    await writeFile(
      join(src, 'package', 'package.json'),
      JSON.stringify({ name: 'deep', version: '0.1.0', license: { type: 'ISC' } }),
    );
    const file = join(tmp, 'deep.tgz');
    await create({ gzip: true, file, cwd: src, portable: true }, ['package']);
    const scan = await scanTgz(file);
    expect(scan.pkg).toEqual({ name: 'deep', version: '0.1.0', license: 'ISC' });
    expect(scan.candidates.map((c) => c.relPath)).toEqual([`skills/${'d'.repeat(60)}/${'e'.repeat(60)}/SKILL.md`]);
  });

  it('fails with import_failed on a corrupt, truncated or missing archive', async () => {
    const corrupt = join(tmp, 'corrupt.tgz');
    await writeFile(corrupt, Buffer.from('this is not a tarball '.repeat(40)));
    await expect(scanTgz(corrupt)).rejects.toMatchObject({
      code: 'import_failed',
      message: expect.stringContaining(`${corrupt} is not a readable .tgz`),
    });
    const truncated = join(tmp, 'truncated.tgz');
    await writeFile(truncated, tgzBytes([PKG, SKILL]).subarray(0, 80));
    await expect(scanTgz(truncated)).rejects.toMatchObject({
      code: 'import_failed',
      message: expect.stringContaining(truncated),
    });
    await expect(scanTgz(join(tmp, 'missing.tgz'))).rejects.toMatchObject({
      code: 'import_failed',
      message: expect.stringContaining('missing.tgz'),
    });
  });

  it('reports progress in bytes and stops with an AbortError when cancelled', async () => {
    const file = await archive([PKG, SKILL]);
    const progress: [number, number][] = [];
    await scanTgz(file, { onProgress: (done, total) => progress.push([done, total]) });
    const { size } = await stat(file);
    expect(progress.at(-1)).toEqual([size, size]);
    const controller = new AbortController();
    controller.abort();
    await expect(scanTgz(file, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
