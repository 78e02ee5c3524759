// The one gate for every file read from a path a user gave us (PEFT folders, bundle folders, skill
// imports, .tgz archives and uploads, trajectory imports, test files): docs/security.md "Files a user
// points us at".
//   1. lstat the path; a symbolic link is resolved (realpath) and its target is checked in turn;
//   2. only regular files pass: a FIFO, socket or device is refused before it is opened (opening a
//      FIFO blocks a thread-pool thread until a writer comes; /dev/zero never ends);
//   3. the size is checked against the limit of its kind, named in the error;
//   4. the file is opened O_NOFOLLOW | O_NONBLOCK (a FIFO swapped in after the check cannot block the
//      open) and fstat'ed again, and at most its size plus one byte is read (one more shows a file
//      that grew meanwhile).
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, type Stats } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import { StudioError } from '../../common/errors';

const MiB = 1024 * 1024;

/** The largest file of each kind the studio reads. */
export const READ_LIMITS = {
  'SKILL.md': 1 * MiB,
  'package.json': 1 * MiB,
  'skill archive (.tgz)': 256 * MiB,
  'PEFT adapter_config.json': 1 * MiB,
  'PEFT adapter_model.safetensors': 512 * MiB,
  'GGUF LoRA adapter': 2048 * MiB,
  'adapter sidecar (pskills.json)': 1 * MiB,
  'bundle.json': 4 * MiB,
  'bundle JSON file': 64 * MiB,
  'bundle graph or weights file': 16 * 1024 * MiB,
  'trajectories JSONL': 256 * MiB,
  'tests JSON': 16 * MiB,
  /** Ollama's folder: a manifest names the model's blob in a few hundred bytes of JSON. */
  'Ollama manifest': 64 * 1024,
  /** Only its header is read (main/models/gguf.ts, held to GGUF_LIMITS); the size bounds nothing else. */
  'GGUF model file': 1024 * 1024 * MiB,
} as const;

export type ReadKind = keyof typeof READ_LIMITS;

export function byteText(n: number): string {
  if (n >= 1024 * MiB && n % (1024 * MiB) === 0) return `${n / (1024 * MiB)} GiB`;
  if (n % MiB === 0) return `${n / MiB} MiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

/** Why a stat is not a regular file ("FIFO", "character device", …), or null for a regular file. */
export function specialKind(info: Stats): string | null {
  if (info.isFile()) return null;
  if (info.isFIFO()) return 'FIFO';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'character device';
  if (info.isBlockDevice()) return 'block device';
  if (info.isDirectory()) return 'folder';
  if (info.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

/** A refusal of the gate: `reason` without the path, for callers that record skips. */
export class GateError extends StudioError {
  constructor(
    readonly path: string,
    readonly reason: string,
    code: 'invalid_input' | 'not_found' = 'invalid_input',
  ) {
    super(code, `${path}: ${reason}`, { path });
  }
}

function refusal(path: string, info: Stats, kind: ReadKind, via?: string): GateError | null {
  const special = specialKind(info);
  const where = via ? ` (symbolic link to ${via})` : '';
  if (special) return new GateError(path, `not a regular file (${special}${where}); not opened`);
  const limit = READ_LIMITS[kind];
  if (info.size > limit)
    return new GateError(
      path,
      `${info.size.toLocaleString('en-US')} bytes${where}, over the ${byteText(limit)} limit for ${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind}; not read`,
    );
  return null;
}

function missing(path: string, err: unknown): GateError {
  const e = err as NodeJS.ErrnoException;
  return e.code === 'ENOENT'
    ? new GateError(path, 'missing', 'not_found')
    : new GateError(path, `not readable (${e.code ?? e.message})`);
}

/** Steps 1–3: the real path to open and the size it had. Throws a GateError. */
export async function checkFile(path: string, kind: ReadKind): Promise<{ real: string; size: number }> {
  const first = await lstat(path).catch((e: unknown) => {
    throw missing(path, e);
  });
  let real = path;
  let info = first;
  if (first.isSymbolicLink()) {
    real = await realpath(path).catch((e: unknown) => {
      throw new GateError(path, `broken symbolic link (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    });
    info = await lstat(real).catch((e: unknown) => {
      throw missing(path, e);
    });
  }
  const no = refusal(path, info, kind, real === path ? undefined : real);
  if (no) throw no;
  return { real, size: info.size };
}

/** Step 4 on an open handle: still a regular file within the limit. */
function recheck(path: string, info: Stats, kind: ReadKind): void {
  const no = refusal(path, info, kind);
  if (no) throw no;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Opens a file that passed the gate; the caller closes the handle. */
export async function openGated(path: string, kind: ReadKind): Promise<{ handle: FileHandle; size: number }> {
  const { real } = await checkFile(path, kind);
  const handle = await open(real, OPEN_FLAGS).catch((e: unknown) => {
    throw missing(path, e);
  });
  try {
    const info = await handle.stat();
    recheck(path, info, kind);
    return { handle, size: info.size };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** The whole file, through the gate. */
export async function readGated(path: string, kind: ReadKind): Promise<Buffer> {
  const { handle, size } = await openGated(path, kind);
  try {
    const buffer = Buffer.alloc(size + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buffer.length; got += n)
      n = (await handle.read(buffer, got, buffer.length - got, got)).bytesRead;
    if (got > size) throw new GateError(path, 'file grew while it was read; not read');
    return buffer.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/** Steps 1–4 for synchronous callers: an open descriptor on a regular file within its limit; the
 *  caller closes it. */
export function openGatedSync(path: string, kind: ReadKind): { fd: number; size: number } {
  let info: Stats;
  try {
    info = lstatSync(path);
  } catch (e) {
    throw missing(path, e);
  }
  let real = path;
  if (info.isSymbolicLink()) {
    try {
      real = realpathSync(path);
      info = lstatSync(real);
    } catch (e) {
      throw new GateError(path, `broken symbolic link (${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
  }
  const no = refusal(path, info, kind, real === path ? undefined : real);
  if (no) throw no;
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (e) {
    throw missing(path, e);
  }
  try {
    const now = fstatSync(fd);
    recheck(path, now, kind);
    return { fd, size: now.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** readGated for synchronous callers (the same four steps). */
export function readGatedSync(path: string, kind: ReadKind): Buffer {
  const { fd, size } = openGatedSync(path, kind);
  try {
    const buffer = Buffer.alloc(size + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buffer.length; got += n) n = readSync(fd, buffer, got, buffer.length - got, got);
    if (got > size) throw new GateError(path, 'file grew while it was read; not read');
    return buffer.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** The text of a file through the gate, strict UTF-8. */
export async function readGatedText(path: string, kind: ReadKind): Promise<string> {
  const bytes = await readGated(path, kind);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new GateError(path, 'not UTF-8 text');
  }
}
