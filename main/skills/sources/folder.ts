// Finds SKILL.md files under a folder. Nothing outside the root is read: directory symlinks are
// never followed (an in-root target is walked where it lives), and a file symlink is read only
// when its real path lies inside the root. Only regular files are opened (a FIFO would block the
// open forever), and the walk is refused past the import caps on entries and bytes.
import { constants, type Dirent, type Stats } from 'node:fs';
import { open, opendir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { StudioError } from '../../../common/errors';
import { throwIfAborted } from '../abort';
import { decodeSkillFile, ImportBudget, tooLarge } from './file-checks';
import { folderOf, isSkillFile, type Candidate, type ScanOptions, type SourceScan } from './types';

const SKIP_DIRS = new Set(['node_modules', '.git']);

export async function scanFolder(root: string, opts: ScanOptions = {}): Promise<SourceScan> {
  const rootReal = await realRoot(root);
  const inside = (p: string) => p === rootReal || p.startsWith(rootReal + sep);
  const rel = (p: string) => relative(rootReal, p).split(sep).join('/');
  const scan: SourceScan = { candidates: [], skipped: [] };
  const budget = new ImportBudget(root, 'SKILL.md files', opts.limits);
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
      entries = await listDir(dir, budget);
    } catch (e) {
      if (e instanceof StudioError) throw e;
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
      } else if (isSkillFile(entry.name)) {
        await readSkill(full, rel(full));
      }
    }
  }
  opts.onProgress?.(queue.length, queue.length);
  return scan;

  async function readSkill(path: string, relPath: string): Promise<void> {
    const result = await readCapped(path, budget);
    if (!result.ok) return skip(relPath, result.reason);
    const folder = folderOf(relPath) ?? basename(rootReal);
    const candidate: Candidate = {
      relPath,
      folderName: folder,
      content: result.text,
      provenanceBase: { kind: 'folder', root: rootReal },
    };
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

/** A folder's entries, sorted; streamed so a huge folder is refused before it is all in memory. */
async function listDir(dir: string, budget: ImportBudget): Promise<Dirent[]> {
  const entries: Dirent[] = [];
  for await (const entry of await opendir(dir)) {
    const over = budget.entry();
    if (over) throw over;
    entries.push(entry);
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Reads a regular file of at most 1 MiB within the import byte cap. The type is checked before
 * opening, and O_NONBLOCK keeps a FIFO swapped in after the check from blocking the open; O_NOFOLLOW
 * refuses a last-moment symlink swap.
 */
async function readCapped(
  path: string,
  budget: ImportBudget,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  let handle;
  try {
    const special = notRegular(await stat(path));
    if (special) return { ok: false, reason: special };
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return { ok: false, reason: `not readable: ${errText(e)}` };
  }
  try {
    const info = await handle.stat();
    const special = notRegular(info);
    if (special) return { ok: false, reason: special };
    const large = tooLarge(info.size);
    if (large) return { ok: false, reason: large };
    const over = budget.take(info.size);
    if (over) throw over;
    // One byte past the size shows a file that grew since the stat; never more than that is read.
    const buffer = Buffer.alloc(info.size + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buffer.length; got += n)
      n = (await handle.read(buffer, got, buffer.length - got, got)).bytesRead;
    return got > info.size
      ? { ok: false, reason: 'file changed while it was read' }
      : decodeSkillFile(buffer.subarray(0, got));
  } finally {
    await handle.close();
  }
}

function notRegular(info: Stats): string | null {
  if (info.isFile()) return null;
  const kind = info.isFIFO()
    ? 'FIFO'
    : info.isSocket()
      ? 'socket'
      : info.isCharacterDevice()
        ? 'character device'
        : info.isBlockDevice()
          ? 'block device'
          : info.isDirectory()
            ? 'folder'
            : 'special file';
  return `not a regular file (${kind}); not opened`;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
