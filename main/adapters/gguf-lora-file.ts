// GGUF LoRA files and Ollama folders on disk (docs/guide.md "Back to llama.cpp, Ollama and LM Studio").
// Each write goes to a temporary name beside its target, is read back through the read gate and compared value by value
// with what was meant (float32 exactly; float16 as rounded), and only then renamed into place.
import { lstat, mkdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { StudioError } from '../../common/errors';
import { makeDirs } from '../files/make-dirs';
import { exportFolderKind, SIDECAR, SIDECAR_FORMAT } from './export-folder';
import type { GgufBase } from './gguf-lora-names';
import { decodeGgufLora, ggufLoraToAdapter, readGgufLoraFile } from './gguf-lora-read';
import { encodeGgufLora, type GgufDtype } from './gguf-lora-write';
import { buildModelfile, type ModelfileInput } from './ollama-modelfile';
import { adapterDiff, checkWritable } from './same';
import type { Adapter } from './types';

export const OLLAMA_ADAPTER = 'adapter.gguf';
export const MODELFILE = 'Modelfile';

/** Encodes, and checks the bytes decode to the same adapter (before anything touches the disk). */
function encodeChecked(
  adapter: Adapter,
  base: GgufBase,
  opts: { dtype: GgufDtype; name?: string; strings?: Record<string, string> },
  where: string,
): Uint8Array {
  const bytes = encodeGgufLora(adapter, base, opts);
  const dims = new Map<string, { dIn: number; dOut: number }>();
  for (const [key, p] of adapter.targets) dims.set(key.slice(key.indexOf('.') + 1), { dIn: p.dIn, dOut: p.dOut });
  const back = ggufLoraToAdapter(decodeGgufLora(Buffer.from(bytes), where), base, dims, where);
  const diff = adapterDiff(adapter, back, { round: opts.dtype });
  if (diff) throw new Error(`${where}: encoding check failed: ${diff}`);
  return bytes;
}

/** True when the file is a llama.cpp LoRA GGUF (an earlier export we may replace), never a model file. */
async function isLoraGguf(path: string): Promise<boolean> {
  return readGgufLoraFile(path).then(
    () => true,
    () => false,
  );
}

/**
 * Writes `file` (a .gguf path). An existing file is replaced only with `overwrite` and only when it is a
 * LoRA GGUF; anything else there (a model GGUF too) is refused, untouched.
 */
export async function writeGgufLoraFile(
  file: string,
  adapter: Adapter,
  base: GgufBase,
  opts: { dtype: GgufDtype; name?: string; strings?: Record<string, string>; overwrite?: boolean },
): Promise<void> {
  checkWritable(adapter, file);
  if (!file.endsWith('.gguf')) throw new Error(`${file}: a GGUF LoRA file's name ends in .gguf`);
  const info = await lstat(file).catch(() => null);
  if (info) {
    if (!info.isFile() || !(await isLoraGguf(file)))
      throw new Error(`${file}: exists and is not a GGUF LoRA adapter; not overwritten (choose a new name)`);
    if (!opts.overwrite)
      throw new StudioError(
        'conflict',
        `${file}: exists; not overwritten (pass --force, or overwrite: true in the API)`,
      );
  }
  const bytes = encodeChecked(adapter, base, opts, file);
  await makeDirs(dirname(file));
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${Date.now()}`);
  try {
    await writeFile(tmp, bytes, { flag: 'wx' });
    const back = ggufLoraToAdapter(await readGgufLoraFile(tmp), base, dimsOf(adapter), file);
    const diff = adapterDiff(adapter, back, { round: opts.dtype });
    if (diff) throw new Error(`${file}: read-back check failed: ${diff}`);
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

function dimsOf(adapter: Adapter): Map<string, { dIn: number; dOut: number }> {
  const dims = new Map<string, { dIn: number; dOut: number }>();
  for (const [key, p] of adapter.targets) dims.set(key.slice(key.indexOf('.') + 1), { dIn: p.dIn, dOut: p.dOut });
  return dims;
}

/**
 * An Ollama folder: adapter.gguf, a Modelfile (FROM the base GGUF, ADAPTER ./adapter.gguf, the chat
 * template and stop strings) and our sidecar. Folder rules as the PEFT export (export-folder.ts).
 */
export async function writeOllamaFolder(
  dir: string,
  adapter: Adapter,
  base: GgufBase,
  opts: {
    dtype: GgufDtype;
    name?: string;
    strings?: Record<string, string>;
    modelfile: Omit<ModelfileInput, 'adapter'>;
    sidecar: Record<string, unknown>;
    overwrite?: boolean;
  },
): Promise<string[]> {
  checkWritable(adapter, dir);
  const modelfile = buildModelfile({ ...opts.modelfile, adapter: `./${OLLAMA_ADAPTER}` });
  const bytes = encodeChecked(adapter, base, opts, join(dir, OLLAMA_ADAPTER));
  const kind = await exportFolderKind(dir);
  if (kind === 'ours' && !opts.overwrite)
    throw new StudioError(
      'conflict',
      `${dir}: holds an earlier adapter export; not overwritten (pass --force, or overwrite: true in the API)`,
    );
  if (kind === 'new') await makeDirs(dirname(dir));
  const files: [string, string | Uint8Array][] = [
    [OLLAMA_ADAPTER, bytes],
    [MODELFILE, modelfile],
    [SIDECAR, JSON.stringify({ format: SIDECAR_FORMAT, ...opts.sidecar }, null, 2) + '\n'],
  ];
  const stamp = `tmp-${process.pid}-${Date.now()}`;
  const tmp = kind === 'new' ? join(dirname(dir), `.${basename(dir)}.${stamp}`) : join(dir, `.pskills-export.${stamp}`);
  await mkdir(tmp);
  try {
    for (const [name, data] of files) await writeFile(join(tmp, name), data);
    const back = ggufLoraToAdapter(await readGgufLoraFile(join(tmp, OLLAMA_ADAPTER)), base, dimsOf(adapter), dir);
    const diff = adapterDiff(adapter, back, { round: opts.dtype });
    if (diff) throw new Error(`${dir}: read-back check failed: ${diff}`);
    if (kind === 'new') await rename(tmp, dir);
    else {
      for (const [name] of files) await rename(join(tmp, name), join(dir, name));
      await rmdir(tmp);
    }
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return files.map(([n]) => n);
}
