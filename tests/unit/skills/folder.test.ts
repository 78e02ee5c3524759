import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanFolder } from '../../../main/skills/sources/folder';
import { skillMd } from '../../fixtures/skills/skill-md';

let tmp: string;
let root: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pskills-folder-'));
  root = join(tmp, 'root');
  await mkdir(root);
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

async function put(rel: string, content: string | Uint8Array) {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), content);
}

describe('scanFolder', () => {
  it('finds SKILL.md and skill.md files, skipping node_modules and .git', async () => {
    await put('skills/a/SKILL.md', skillMd({ name: 'a' }));
    await put('skills/b/skill.md', skillMd({ name: 'b' }));
    await put('SKILL.md', skillMd({ name: 'top' }));
    await put('skills/c/README.md', '# not a skill');
    await put('node_modules/dep/skills/x/SKILL.md', skillMd({ name: 'x' }));
    await put('.git/SKILL.md', skillMd({ name: 'g' }));
    const scan = await scanFolder(root);
    expect(scan.candidates.map((c) => [c.relPath, c.folderName])).toEqual([
      ['SKILL.md', 'root'],
      ['skills/a/SKILL.md', 'a'],
      ['skills/b/skill.md', 'b'],
    ]);
    expect(scan.candidates[1]?.provenanceBase).toEqual({ kind: 'folder', root });
    expect(scan.skipped).toEqual([]);
  });

  it('skips oversized, binary and invalid UTF-8 files with a reason', async () => {
    await put('big/SKILL.md', 'x'.repeat(1024 * 1024 + 1));
    await put('max/SKILL.md', `${skillMd()}${' '.repeat(1024 * 1024 - Buffer.byteLength(skillMd()))}`);
    await put('bin/SKILL.md', Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0x01]));
    await put(
      'latin1/SKILL.md',
      Buffer.concat([Buffer.from('---\nname: caf'), Buffer.from([0xe9]), Buffer.from('\n---\n')]),
    );
    const scan = await scanFolder(root);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['max/SKILL.md']);
    expect(scan.skipped).toEqual([
      { path: 'big/SKILL.md', reason: '1,048,577 bytes, over the 1 MiB limit for a SKILL.md; not read' },
      { path: 'bin/SKILL.md', reason: 'binary file (NUL byte at offset 4)' },
      { path: 'latin1/SKILL.md', reason: 'invalid UTF-8 at byte offset 13' },
    ]);
  });

  it('never reads through a symlink that leaves the root', async () => {
    const outside = join(tmp, 'outside');
    await mkdir(join(outside, 'secret'), { recursive: true });
    await writeFile(join(outside, 'SKILL.md'), skillMd({ name: 'stolen' }));
    await writeFile(join(outside, 'secret', 'SKILL.md'), skillMd({ name: 'stolen-too' }));
    await mkdir(join(root, 'skills', 'evil'), { recursive: true });
    await symlink(join(outside, 'SKILL.md'), join(root, 'skills', 'evil', 'SKILL.md'));
    await symlink(join(outside, 'secret'), join(root, 'skills', 'linked-dir'));
    await symlink('../../outside/SKILL.md', join(root, 'skills', 'relative.md'));
    const scan = await scanFolder(root);
    expect(scan.candidates).toEqual([]);
    expect(scan.skipped.map((s) => s.path).sort()).toEqual([
      'skills/evil/SKILL.md',
      'skills/linked-dir',
      'skills/relative.md',
    ]);
    for (const s of scan.skipped) expect(s.reason).toMatch(/^symbolic link points outside the import root/);
    expect(JSON.stringify(scan)).not.toContain('stolen');
  });

  it('reads a file symlink whose target stays inside the root, under the link path', async () => {
    await put('shared/base.md', skillMd({ name: 'linked' }));
    await mkdir(join(root, 'skills', 'linked'), { recursive: true });
    await symlink('../../shared/base.md', join(root, 'skills', 'linked', 'SKILL.md'));
    await symlink(join(root, 'nowhere'), join(root, 'skills', 'SKILL.md'));
    const scan = await scanFolder(root);
    expect(scan.candidates.map((c) => [c.relPath, c.folderName])).toEqual([['skills/linked/SKILL.md', 'linked']]);
    expect(scan.skipped).toEqual([{ path: 'skills/SKILL.md', reason: 'broken symbolic link' }]);
  });

  it('fails with import_failed naming a missing folder', async () => {
    await expect(scanFolder(join(tmp, 'missing'))).rejects.toMatchObject({
      code: 'import_failed',
      message: expect.stringContaining('missing'),
    });
  });

  it('stops with an AbortError when cancelled', async () => {
    await put('skills/a/SKILL.md', skillMd());
    const controller = new AbortController();
    controller.abort();
    await expect(scanFolder(root, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
