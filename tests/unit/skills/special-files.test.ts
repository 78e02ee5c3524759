// A SKILL.md that is (a link to) a FIFO or socket must be skipped, not opened.
// Opening a FIFO for reading blocks until a writer comes, so the old code hung here forever.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { collectImport } from '../../../main/skills/importer';
import { scanFolder } from '../../../main/skills/sources/folder';
import { skillMd } from '../../fixtures/skills/skill-md';

let tmp: string;
let root: string;
let server: Server | undefined;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pskills-special-'));
  root = join(tmp, 'root');
  await mkdir(join(root, 'fifo'), { recursive: true });
});
afterEach(async () => {
  // A reader stuck in open() on the FIFO is released by a writer, so a failing run still ends.
  try {
    closeSync(openSync(join(root, 'fifo', 'pipe'), constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader was waiting
  }
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await rm(tmp, { recursive: true, force: true });
});

it(
  'skips a SKILL.md symlinked to a FIFO or a socket with a reason, and imports the rest',
  { timeout: 5000 },
  async () => {
    execFileSync('mkfifo', [join(root, 'fifo', 'pipe')]);
    await mkdir(join(root, 'viafifo'));
    await symlink('../fifo/pipe', join(root, 'viafifo', 'SKILL.md'));
    const sock = join(root, 'fifo', 'sock');
    server = createServer();
    await new Promise<void>((resolve) => server!.listen(sock, resolve));
    await mkdir(join(root, 'viasock'));
    await symlink('../fifo/sock', join(root, 'viasock', 'SKILL.md'));
    await mkdir(join(root, 'good'));
    await writeFile(join(root, 'good', 'SKILL.md'), skillMd({ name: 'good' }));

    const scan = await scanFolder(root);
    expect(scan.candidates.map((c) => c.relPath)).toEqual(['good/SKILL.md']);
    expect(scan.skipped).toEqual([
      { path: 'viafifo/SKILL.md', reason: 'not a regular file (FIFO); not opened' },
      { path: 'viasock/SKILL.md', reason: 'not a regular file (socket); not opened' },
    ]);
  },
);

it('skips a FIFO named SKILL.md directly in the folder', { timeout: 5000 }, async () => {
  await mkdir(join(root, 'direct'));
  execFileSync('mkfifo', [join(root, 'direct', 'SKILL.md')]);
  const scan = await scanFolder(root);
  expect(scan.candidates).toEqual([]);
  expect(scan.skipped).toEqual([{ path: 'direct/SKILL.md', reason: 'not a regular file (FIFO); not opened' }]);
});

it('refuses a FIFO given as the import source without opening it', { timeout: 5000 }, async () => {
  const pipe = join(root, 'fifo', 'pipe');
  execFileSync('mkfifo', [pipe]);
  await expect(collectImport(pipe, { cacheDir: join(tmp, 'cache') })).rejects.toMatchObject({
    code: 'import_failed',
    message: `${pipe} is neither a folder nor a regular file; not opened`,
  });
});
