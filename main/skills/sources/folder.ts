// Finds SKILL.md files under a folder. Nothing outside the root is read: directory symlinks are
// never followed (an in-root target is walked where it lives), and a file symlink is read only
// when its real path lies inside the root.
import { constants, type Dirent } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { StudioError } from '../../../common/errors';
import { throwIfAborted } from '../abort';
import { decodeSkillFile, tooLarge } from './file-checks';
import { folderOf, isSkillFile, type Candidate, type ScanOptions, type SourceScan } from './types';

const SKIP_DIRS = new Set(['node_modules', '.git']);

export async function scanFolder(root: string, opts: ScanOptions = {}): Promise<SourceScan> {
  const rootReal = await realRoot(root);
  const inside = (p: string) => p === rootReal || p.startsWith(rootReal + sep);
  const rel = (p: string) => relative(rootReal, p).split(sep).join('/');
  const scan: SourceScan = { candidates: [], skipped: [] };
  const skip = (path: string, reason: string) => {
    const record = { path, reason };
    scan.skipped.push(record);
    opts.onSkip?.(record);
  };
  const queue = [rootReal];
  for (let done = 0; done < queue.length; done++) {
    throwIfAborted(opts.signal);
    opts.onProgress?.(done, queue.length);
    const dir = queue[done] ?? rootReal;
    let entries: Dirent[];
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    } catch (e) {
      skip(rel(dir) || '.', `folder not readable: ${errText(e)}`);
      continue;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) queue.push(full);
      } else if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = await realpath(full);
        } catch {
          if (isSkillFile(entry.name)) skip(rel(full), 'broken symbolic link');
          continue;
        }
        if (!inside(target)) skip(rel(full), `symbolic link points outside the import root (${target}); not read`);
        else if (isSkillFile(entry.name)) await readSkill(target, rel(full));
      } else if (entry.isFile() && isSkillFile(entry.name)) {
        await readSkill(full, rel(full));
      }
    }
  }
  opts.onProgress?.(queue.length, queue.length);
  return scan;

  async function readSkill(path: string, relPath: string): Promise<void> {
    const result = await readCapped(path);
    if (!result.ok) return skip(relPath, result.reason);
    const folder = folderOf(relPath) ?? basename(rootReal);
    const candidate: Candidate = { relPath, folderName: folder, content: result.text, provenanceBase: { kind: 'folder', root: rootReal } };
    scan.candidates.push(candidate);
  }
}

async function realRoot(root: string): Promise<string> {
  try {
    const real = await realpath(root);
    if (!(await stat(real)).isDirectory()) throw new Error('not a folder');
    return real;
  } catch (e) {
    throw new StudioError('import_failed', `cannot import folder ${root}: ${errText(e)}`);
  }
}

/** Opens without following a last-moment symlink swap and never reads past the 1 MiB cap. */
async function readCapped(path: string): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (e) {
    return { ok: false, reason: `not readable: ${errText(e)}` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, reason: 'not a regular file' };
    const large = tooLarge(info.size);
    if (large) return { ok: false, reason: large };
    return decodeSkillFile(await handle.readFile());
  } finally {
    await handle.close();
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
