// PEFT directories on disk. Writes go to a temporary folder, are read back and compared key by key,
// and only then renamed into place, so a reader never sees a half-written file.
import { lstat, mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StudioError } from '../../common/errors';
import { GateError, readGated } from '../files/read-gate';
import { makeDirs } from '../files/make-dirs';
import { exportFolderKind, SIDECAR, SIDECAR_FORMAT } from './export-folder';
import { readPeft, writePeft } from './peft';
import { adapterDiff, checkWritable } from './same';
import type { Adapter } from './types';

export const PEFT_CONFIG = 'adapter_config.json';
export const PEFT_WEIGHTS = 'adapter_model.safetensors';
export { SIDECAR };

/** A PEFT folder, each file through the read gate (main/files/read-gate.ts: regular files only,
 *  symlinks resolved and re-checked, a size limit per file, FIFOs never opened). */
export async function readPeftDir(dir: string): Promise<{ adapter: Adapter; sidecar: unknown }> {
  const read = (f: string, kind: Parameters<typeof readGated>[1]) =>
    readGated(join(dir, f), kind).catch((err: unknown) => {
      if (err instanceof GateError && err.code === 'not_found')
        throw new GateError(
          err.path,
          `missing (a PEFT adapter folder has ${PEFT_CONFIG} and ${PEFT_WEIGHTS})`,
          'not_found',
        );
      throw err;
    });
  const config = await read(PEFT_CONFIG, 'PEFT adapter_config.json');
  const weights = await read(PEFT_WEIGHTS, 'PEFT adapter_model.safetensors');
  const hasSidecar = await lstat(join(dir, SIDECAR)).then(
    () => true,
    () => false,
  );
  const sidecarText = hasSidecar ? (await read(SIDECAR, 'adapter sidecar (pskills.json)')).toString('utf8') : null;
  let sidecar: unknown = null;
  if (sidecarText !== null) {
    try {
      sidecar = JSON.parse(sidecarText);
    } catch {
      throw new Error(`${join(dir, SIDECAR)}: not valid JSON`);
    }
  }
  return {
    adapter: readPeft(config.toString('utf8'), new Uint8Array(weights.buffer, weights.byteOffset, weights.length), dir),
    sidecar,
  };
}

/**
 * Writes the adapter as a PEFT folder plus our sidecar; refuses all-zero adapters, and any `dir` that
 * is not new, empty or (with `overwrite`) a previous export of ours (see export-folder.ts). Only our
 * three files are replaced; nothing else in `dir` is touched. Missing parents are made one level at a
 * time (main/files/make-dirs.ts), so an impossible target fails at once, naming the folder.
 */
export async function writePeftDir(
  dir: string,
  adapter: Adapter,
  sidecar: Record<string, unknown>,
  baseModel: string | null = null,
  overwrite = false,
): Promise<void> {
  checkWritable(adapter, dir);
  const kind = await exportFolderKind(dir);
  if (kind === 'ours' && !overwrite)
    throw new StudioError(
      'conflict',
      `${dir}: holds an earlier adapter export; not overwritten (pass --force, or overwrite: true in the API)`,
    );
  if (kind === 'new') await makeDirs(dirname(dir));
  const { config, weights } = writePeft(adapter, { baseModel });
  const files: [string, string | Uint8Array][] = [
    [PEFT_WEIGHTS, weights],
    [PEFT_CONFIG, config],
    [SIDECAR, JSON.stringify({ format: SIDECAR_FORMAT, ...sidecar }, null, 2) + '\n'],
  ];
  // A new folder is built beside its final name; an existing one gets a temp folder inside it.
  const stamp = `tmp-${process.pid}-${Date.now()}`;
  const tmp = kind === 'new' ? join(dirname(dir), `.${basename(dir)}.${stamp}`) : join(dir, `.pskills-export.${stamp}`);
  await mkdir(tmp);
  try {
    for (const [name, data] of files) await writeFile(join(tmp, name), data);
    const back = await readPeftDir(tmp);
    const diff = adapterDiff(adapter, back.adapter);
    if (diff) throw new Error(`${dir}: read-back check failed: ${diff}`);
    if (kind === 'new')
      await rename(tmp, dir); // fails, touching nothing, if `dir` was filled meanwhile
    else {
      for (const [name] of files) await rename(join(tmp, name), join(dir, name));
      await rmdir(tmp);
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}
