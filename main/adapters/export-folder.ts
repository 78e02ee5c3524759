// Which folders an adapter export may write into. Only a new folder, an empty one, or a previous
// export of ours (recognised by its pskills.json sidecar): an export never deletes a user's files.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

export const SIDECAR = 'pskills.json';
export const SIDECAR_FORMAT = 'pskills.sidecar/1';

export type ExportFolder = 'new' | 'empty' | 'ours';

export class ExportFolderError extends Error {}

const refuse = (dir: string, why: string) =>
  new ExportFolderError(`${dir}: ${why}; choose a new or empty folder (or one a previous adapter export wrote)`);

async function isOurSidecar(path: string): Promise<boolean> {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return false;
  try {
    const v = JSON.parse(text) as { format?: unknown } | null;
    return typeof v?.format === 'string' && v.format.startsWith('pskills.sidecar/');
  } catch {
    return false;
  }
}

/** What `dir` is now; throws ExportFolderError, naming the folder, for anything we must not touch. */
export async function exportFolderKind(dir: string): Promise<ExportFolder> {
  const info = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw refuse(dir, `cannot be read (${err.code ?? err.message})`);
  });
  if (info === null) return 'new';
  if (!info.isDirectory()) throw refuse(dir, 'exists and is not a folder');
  const entries = await readdir(dir);
  if (entries.length === 0) return 'empty';
  if (entries.includes(SIDECAR) && (await isOurSidecar(join(dir, SIDECAR)))) return 'ours';
  throw refuse(dir, `not empty and not a previous adapter export (no ${SIDECAR} of ours)`);
}
