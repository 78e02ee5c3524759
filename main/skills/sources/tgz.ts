// Reads SKILL.md files straight out of a .tgz (npm pack output) with node-tar's streaming parser;
// nothing is extracted to disk. One absolute or '..' entry path rejects the whole archive, and
// link entries are never followed. Only SKILL.md and package.json bodies are buffered, within the
// import byte cap; everything else streams past.
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import type { SkipRecord } from '../../../common/api/skill-schemas';
import { StudioError } from '../../../common/errors';
import { GateError, openGated } from '../../files/read-gate';
import { abortError } from '../abort';
import { decodeSkillFile, ImportBudget, tooLarge, type FileCheck } from './file-checks';
import { folderOf, isSkillFile, type ProvenanceBase, type ScanOptions, type SourceScan } from './types';

export interface PackageInfo {
  name: string | null;
  version: string | null;
  license: string | null;
}

export interface TgzOptions extends ScanOptions {
  /** Provenance for the archive's skills; defaults to kind 'tgz'. */
  provenance?: (pkg: PackageInfo) => ProvenanceBase;
}

interface RawArchive {
  files: Map<string, FileCheck>; // SKILL.md and package.json texts (or why not) by entry path
  skipped: SkipRecord[]; // entry paths, before the top folder is stripped
  paths: string[];
}

export async function scanTgz(file: string, opts: TgzOptions = {}): Promise<SourceScan & { pkg: PackageInfo }> {
  const raw = await readArchive(file, await openArchive(file), opts);
  const prefix = commonTopFolder(raw.paths);
  const strip = (p: string) => (prefix && p.startsWith(prefix) ? p.slice(prefix.length) : p);
  const pkg = packageInfo(raw.files.get(`${prefix}package.json`));
  const base = opts.provenance?.(pkg) ?? {
    kind: 'tgz',
    file,
    package: pkg.name,
    version: pkg.version,
    license: pkg.license,
  };
  const scan: SourceScan & { pkg: PackageInfo } = { candidates: [], skipped: [], pkg };
  const skip = (record: SkipRecord) => {
    scan.skipped.push(record);
    opts.onSkip?.(record);
  };
  for (const s of raw.skipped) skip({ path: strip(s.path), reason: s.reason });
  for (const [path, checked] of raw.files) {
    if (!isSkillFile(path.split('/').pop() ?? '')) continue;
    const relPath = strip(path);
    if (!checked.ok) skip({ path: relPath, reason: checked.reason });
    else
      scan.candidates.push({
        relPath,
        folderName: folderOf(relPath) ?? rootFolderName(file, pkg),
        content: checked.text,
        provenanceBase: base,
      });
  }
  return scan;
}

/** Tar entry types that are not files, folders or links (docs/security.md "Files a user points us at"). */
const SPECIAL_ENTRY: Record<string, string> = {
  CharacterDevice: 'character device',
  BlockDevice: 'block device',
  FIFO: 'FIFO',
};

function readArchive(
  file: string,
  { handle, size }: { handle: FileHandle; size: number },
  opts: ScanOptions,
): Promise<RawArchive> {
  const raw: RawArchive = { files: new Map(), skipped: [], paths: [] };
  const budget = new ImportBudget(file, 'SKILL.md and package.json files', opts.limits);
  return new Promise((resolve, reject) => {
    let settled = false;
    // Small reads: deflate expands up to ~1000:1, and each read is inflated in one go.
    const stream = handle.createReadStream({ highWaterMark: 16 * 1024 });
    const parser = new Parser({ strict: true });
    const settle = () => {
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: Error) => {
      if (settled) return;
      settle();
      stream.destroy();
      reject(err);
    };
    const onAbort = () => fail(abortError());
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) return onAbort();

    parser.on('entry', (entry: ReadEntry) => {
      if (settled) return entry.resume(); // the parser may still hold entries read before a failure
      const path = entry.path.replace(/^(\.\/)+/, '');
      const unsafe = unsafeReason(path);
      const refusal = unsafe
        ? new StudioError('import_failed', `${file} rejected: entry '${entry.path}' ${unsafe}; nothing was imported`)
        : budget.entry();
      if (refusal) {
        entry.resume();
        return fail(refusal);
      }
      raw.paths.push(path);
      const name = path.split('/').pop() ?? '';
      if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
        const kind = entry.type === 'Link' ? 'hard link' : 'symbolic link';
        raw.skipped.push({ path, reason: `${kind} entry (→ ${entry.linkpath ?? '?'}) not followed` });
      } else if (SPECIAL_ENTRY[entry.type]) {
        // Nothing is extracted, but the archive said a device or FIFO is there: the user sees it skipped.
        raw.skipped.push({ path, reason: `${SPECIAL_ENTRY[entry.type]} entry; not a regular file, not read` });
      } else if (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile') {
        const wanted = isSkillFile(name) || /^([^/]+\/)?package\.json$/.test(path);
        const large = tooLarge(entry.size);
        if (wanted && large) raw.skipped.push({ path, reason: large });
        else if (wanted) {
          const over = budget.take(entry.size); // checked before a byte is held
          if (!over) return collect(entry, path);
          entry.resume();
          return fail(over);
        }
      }
      entry.resume();
    });
    const collect = (entry: ReadEntry, path: string) => {
      const chunks: Buffer[] = []; // at most the header's size, already checked against the cap
      entry.on('data', (c: Buffer) => chunks.push(c));
      // Decoded at once, so the bytes and the text are not both held for the whole archive.
      entry.on('end', () => raw.files.set(path, decodeSkillFile(Buffer.concat(chunks))));
    };
    parser.on('error', (e: Error) =>
      fail(new StudioError('import_failed', `${file} is not a readable .tgz: ${e.message}`)),
    );
    parser.on('end', () => {
      if (settled) return;
      settle();
      resolve(raw);
    });
    stream.on('error', (e) => fail(new StudioError('import_failed', `cannot read ${file}: ${e.message}`)));
    let done = 0;
    stream.on('data', (chunk) => {
      done += chunk.length;
      opts.onProgress?.(done, size);
    });
    stream.pipe(parser as unknown as NodeJS.WritableStream);
  });
}

/** The archive, opened through the read gate (main/files/read-gate.ts): a regular file (symlinks
 *  resolved and re-checked) within the archive limit; a FIFO or device is never opened. The stream
 *  reads this handle, so what was checked is what is read. */
async function openArchive(file: string): Promise<{ handle: FileHandle; size: number }> {
  try {
    return await openGated(file, 'skill archive (.tgz)');
  } catch (e) {
    throw new StudioError(
      'import_failed',
      `cannot read archive ${e instanceof GateError ? e.message : `${file}: ${e instanceof Error ? e.message : String(e)}`}`,
    );
  }
}

/** A SKILL.md at the archive root is named after the package, else after the archive file. */
function rootFolderName(file: string, pkg: PackageInfo): string {
  return pkg.name?.replace(/^@[^/]+\//, '') ?? basename(file).replace(/\.(tgz|tar\.gz)$/i, '');
}

/** Why an entry path could land outside the archive root, or null when it cannot. */
export function unsafeReason(path: string): string | null {
  if (/^([\\/]|[A-Za-z]:)/.test(path)) return 'has an absolute path';
  if (path.split(/[\\/]/).includes('..')) return "escapes the archive root with '..'";
  return null;
}

/** 'package/' when every entry sits under one top folder (npm pack's layout), else ''. */
function commonTopFolder(paths: string[]): string {
  const tops = new Set(paths.map((p) => (p.includes('/') ? p.slice(0, p.indexOf('/') + 1) : p)));
  const [only] = tops;
  return tops.size === 1 && only?.endsWith('/') ? only : '';
}

function packageInfo(file: FileCheck | undefined): PackageInfo {
  const none: PackageInfo = { name: null, version: null, license: null };
  if (!file?.ok) return none;
  let json: unknown;
  try {
    json = JSON.parse(file.text);
  } catch {
    return none;
  }
  if (typeof json !== 'object' || json === null) return none;
  const pkg = json as { name?: unknown; version?: unknown; license?: unknown; licenses?: unknown };
  return {
    name: str(pkg.name),
    version: str(pkg.version),
    license: licenseOf(pkg.license ?? (Array.isArray(pkg.licenses) ? pkg.licenses[0] : undefined)),
  };
}

// package.json licence: an SPDX string, or the legacy { type } object.
function licenseOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return str((value as { type?: unknown }).type);
  return null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}
