// collectImport: a source (folder, .tgz, npm spec) → ready-to-write versions plus the reasons each
// other SKILL.md was left out. Writes nothing: the caller stores the batch in one transaction.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ImportProgress, SkipRecord } from '../../common/api/skill-schemas';
import { StudioError } from '../../common/errors';
import type { NewVersion } from '../store/types';
import { throwIfAborted } from './abort';
import { detectNonEnglish, licenseForbidsReuse } from './filters';
import { bodyHash } from './normalize';
import { parseSkillMd } from './parse';
import { scanFolder } from './sources/folder';
import { scanNpm } from './sources/npm';
import { scanTgz } from './sources/tgz';
import { withPath, type Candidate, type ScanOptions, type SourceScan } from './sources/types';

export interface ImportOptions {
  cacheDir: string;
  signal?: AbortSignal;
  onProgress?: (p: ImportProgress) => void;
  /** True when the library already holds this body under a different skill name. */
  isKnownBody?: (bodyHash: string, name: string) => boolean;
}

export interface CollectedImport {
  versions: NewVersion[];
  skipped: SkipRecord[];
}

const SLICE_MS = 8;
const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

export async function collectImport(source: string, opts: ImportOptions): Promise<CollectedImport> {
  throwIfAborted(opts.signal);
  const emit = opts.onProgress ?? (() => undefined);
  const at = { done: 0, total: 0 }; // latest scan progress, repeated on skip events
  const report = throttled((done, total) => emit({ phase: 'scan', done, total }));
  const scanOpts: ScanOptions = {
    signal: opts.signal,
    onProgress: (done, total) => {
      Object.assign(at, { done, total });
      report(done, total);
    },
    onSkip: (skipped) => emit({ phase: 'scan', ...at, path: skipped.path, skipped }),
  };
  const scan = await scanSource(source, opts, scanOpts);
  throwIfAborted(opts.signal);
  const skipped = [...scan.skipped];
  const versions: NewVersion[] = [];
  const seenBodies = new Map<string, string>(); // body hash → path of the first skill with it
  const seenNames = new Map<string, string>(); // name → path of the first skill with it
  const total = scan.candidates.length;
  // Judging (parse, language detection) is pure JS at ~1 ms a skill: it runs in slices of at most
  // SLICE_MS and yields between them, so 10,000 skills never hold the event loop (docs/security.md
  // "A frozen server"; bench/event-loop.ts measures import_10k).
  let sliceStart = performance.now();
  for (const [i, candidate] of scan.candidates.entries()) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToLoop();
      sliceStart = performance.now();
    }
    throwIfAborted(opts.signal);
    const path = candidate.relPath;
    const result = judge(candidate, seenBodies, seenNames, opts.isKnownBody);
    if ('reason' in result) {
      const record = { path, reason: result.reason };
      skipped.push(record);
      emit({ phase: 'parse', done: i + 1, total, path, skipped: record });
    } else {
      versions.push(result);
      emit({ phase: 'parse', done: i + 1, total, path });
    }
  }
  return { versions, skipped };
}

/** The version to import, or why this candidate is left out. Cheap checks run first. */
function judge(
  c: Candidate,
  seenBodies: Map<string, string>,
  seenNames: Map<string, string>,
  isKnownBody?: (hash: string, name: string) => boolean,
): NewVersion | { reason: string } {
  const parsed = parseSkillMd(c.content, { folderName: c.folderName });
  const error = parsed.diagnostics.find((d) => d.severity === 'error');
  if (error) return { reason: `invalid SKILL.md at line ${error.line}: ${error.message}` };
  const description = parsed.frontmatter.description?.trim();
  if (!description) return { reason: "no 'description' in the frontmatter" };
  const skillLicence = licenseForbidsReuse(parsed.frontmatter.license);
  if (skillLicence) return { reason: `skill ${skillLicence}` };
  const packageLicence = 'license' in c.provenanceBase ? licenseForbidsReuse(c.provenanceBase.license) : null;
  if (packageLicence) return { reason: `package ${packageLicence}` };
  const language = detectNonEnglish(parsed.body);
  if (language) return { reason: language };
  const hash = bodyHash(parsed);
  const twin = seenBodies.get(hash);
  if (twin !== undefined) return { reason: `duplicate body of ${twin} in this import` };
  const name = parsed.frontmatter.name?.trim() || c.folderName;
  if (!name) return { reason: "no 'name' in the frontmatter and no folder to name the skill after" };
  // A body the library holds under another name is a duplicate; under this name it is a re-import.
  if (isKnownBody?.(hash, name)) return { reason: 'same body as another skill already in the library' };
  const namesake = seenNames.get(name);
  if (namesake !== undefined)
    return { reason: `another skill named '${name}' (${namesake}) is already in this import` };
  seenBodies.set(hash, c.relPath);
  seenNames.set(name, c.relPath);
  const pkg = 'package' in c.provenanceBase ? c.provenanceBase.package : null;
  return {
    name,
    description,
    content: c.content,
    bodyHash: hash,
    package: pkg,
    provenance: withPath(c.provenanceBase, c.relPath),
  };
}

async function scanSource(source: string, opts: ImportOptions, scanOpts: ScanOptions): Promise<SourceScan> {
  const trimmed = source.trim();
  const kind = await sourceKind(trimmed);
  if (kind === 'folder') return scanFolder(resolve(trimmed), scanOpts);
  if (kind === 'tgz') return scanTgz(resolve(trimmed), scanOpts);
  const emit = opts.onProgress;
  return scanNpm(trimmed, {
    ...scanOpts,
    cacheDir: opts.cacheDir,
    onFetch: (done, total) => emit?.({ phase: 'fetch', done, total }),
  });
}

async function sourceKind(source: string): Promise<'folder' | 'tgz' | 'npm'> {
  if (source === '')
    throw new StudioError('import_failed', 'no source given: name an npm package, a folder or a .tgz file');
  if (source.includes('\0'))
    throw new StudioError(
      'invalid_input',
      'source: must not contain a NUL character (U+0000); no path or npm package name can',
    );
  const info = await stat(source).catch(() => null);
  if (info?.isDirectory()) return 'folder';
  if (info?.isFile()) {
    if (/\.(tgz|tar\.gz)$/i.test(source)) return 'tgz';
    throw new StudioError('import_failed', `${source} is a file but not a .tgz/.tar.gz archive`);
  }
  if (info) throw new StudioError('import_failed', `${source} is neither a folder nor a regular file; not opened`);
  if (looksLikePath(source)) throw new StudioError('import_failed', `${source} does not exist`);
  return 'npm';
}

// An npm name never starts with '.', '/', '~' or a drive letter, nor has a '/' outside its @scope.
function looksLikePath(source: string): boolean {
  return (
    /^(\.|\/|~|\\|[A-Za-z]:[\\/])/.test(source) ||
    /\.(tgz|tar\.gz)$/i.test(source) ||
    (source.includes('/') && !source.startsWith('@')) ||
    source.includes('\\')
  );
}

/** Scan progress comes per directory or per 64 KiB read: pass on at most one event per 100 ms, and the last. */
function throttled(fn: (done: number, total: number) => void): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 100) return;
    last = now;
    fn(done, total);
  };
}
