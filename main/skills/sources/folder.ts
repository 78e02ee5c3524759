// Finds SKILL.md files under a folder. Nothing outside the root is read: directory symlinks are
// never followed (an in-root target is walked where it lives), and a file symlink is read only
// when its real path lies inside the root. Only regular files are opened (a FIFO would block the
// open forever), and the walk is refused past the import caps on entries and bytes.
import type { Dirent } from 'node:fs';
import { opendir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { StudioError } from '../../../common/errors';
import { throwIfAborted } from '../abort';
import { GateError, openGated } from '../../files/read-gate';
import { decodeSkillFile, ImportBudget } from './file-checks';
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
 * Reads a SKILL.md through the read gate (main/files/read-gate.ts: lstat, regular files only, the
 * 1 MiB limit, opened O_NOFOLLOW | O_NONBLOCK and checked again) within the import byte cap. A
 * refusal of the gate is this file's skip reason; the byte cap refuses the whole import.
 */
async function readCapped(
  path: string,
  budget: ImportBudget,
): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  let opened;
  try {
    opened = await openGated(path, 'SKILL.md');
  } catch (e) {
    return { ok: false, reason: e instanceof GateError ? e.reason : `not readable: ${errText(e)}` };
  }
  const { handle, size } = opened;
  try {
    const over = budget.take(size);
    if (over) throw over;
    // One byte past the size shows a file that grew since the stat; never more than that is read.
    const buffer = Buffer.alloc(size + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buffer.length; got += n)
      n = (await handle.read(buffer, got, buffer.length - got, got)).bytesRead;
    return got > size
      ? { ok: false, reason: 'file changed while it was read' }
      : decodeSkillFile(buffer.subarray(0, got));
  } finally {
    await handle.close();
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
