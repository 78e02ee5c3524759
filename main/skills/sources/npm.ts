// Fetches a package with `npm pack` (no shell, no install scripts) into <cacheDir>/npm and reads
// its skills through tgz.ts. A sidecar JSON keeps what only npm pack reports (integrity), so an
// exact name@version already in the cache is read again without the network.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StudioError } from '../../../common/errors';
import { abortError, throwIfAborted } from '../abort';
import { parseNpmSpec, tarballName } from './npm-spec';
import { scanTgz, type PackageInfo } from './tgz';
import type { ScanOptions, SourceScan } from './types';

export interface PackResult {
  name: string;
  version: string;
  integrity: string | null;
  filename: string;
}

/** Runs npm with these arguments; rejects with an Error carrying `stderr` and `stdout` on failure. */
export type NpmRunner = (args: string[], signal?: AbortSignal) => Promise<string>;

export interface NpmOptions extends ScanOptions {
  cacheDir: string;
  runNpm?: NpmRunner;
  onFetch?: (done: number, total: number) => void;
}

export async function scanNpm(
  spec: string,
  opts: NpmOptions,
): Promise<SourceScan & { pkg: PackageInfo; pack: PackResult; cached: boolean }> {
  const parsed = parseNpmSpec(spec);
  if (typeof parsed === 'string') throw new StudioError('import_failed', parsed);
  throwIfAborted(opts.signal);
  const dir = join(opts.cacheDir, 'npm');
  await mkdir(dir, { recursive: true });
  opts.onFetch?.(0, 1);
  throwIfAborted(opts.signal);
  const hit = parsed.exactVersion ? await cachedPack(dir, tarballName(parsed.name, parsed.exactVersion)) : null;
  const pack = hit ?? (await npmPack(spec.trim(), dir, opts.runNpm ?? runNpm, opts.signal));
  opts.onFetch?.(1, 1);
  throwIfAborted(opts.signal);
  const scan = await scanTgz(join(dir, pack.filename), {
    ...opts,
    provenance: (pkg) => ({
      kind: 'npm',
      package: pack.name,
      version: pack.version,
      license: pkg.license,
      integrity: pack.integrity,
    }),
  });
  return { ...scan, pack, cached: hit !== null };
}

async function npmPack(spec: string, dir: string, run: NpmRunner, signal?: AbortSignal): Promise<PackResult> {
  let stdout: string;
  try {
    stdout = await run(['pack', spec, '--json', '--ignore-scripts', '--pack-destination', dir], signal);
  } catch (e) {
    if (signal?.aborted || (e instanceof Error && e.name === 'AbortError')) throw abortError();
    throw new StudioError('import_failed', `npm pack ${spec} failed: ${npmFailure(e)}`);
  }
  const pack = readPackJson(stdout);
  if (!pack)
    throw new StudioError(
      'import_failed',
      `npm pack ${spec} printed no package description (stdout: ${stdout.slice(0, 200)})`,
    );
  const sidecar = join(dir, `${pack.filename}.json`);
  await writeFile(`${sidecar}.tmp`, JSON.stringify(pack, null, 2));
  await rename(`${sidecar}.tmp`, sidecar);
  return pack;
}

/** The sidecar's record when the tarball is there and still matches its integrity. */
async function cachedPack(dir: string, filename: string): Promise<PackResult | null> {
  try {
    const pack = JSON.parse(await readFile(join(dir, `${filename}.json`), 'utf8')) as PackResult;
    if (pack.filename !== filename || !pack.integrity) return null;
    const [algo, digest] = pack.integrity.split('-', 2);
    const actual = createHash(algo ?? 'sha512')
      .update(await readFile(join(dir, filename)))
      .digest('base64');
    return actual === digest ? pack : null;
  } catch {
    return null; // missing or unreadable cache entry: fetch again
  }
}

function readPackJson(stdout: string): PackResult | null {
  try {
    const [first] = JSON.parse(stdout) as Array<Record<string, unknown>>;
    if (
      !first ||
      typeof first.name !== 'string' ||
      typeof first.version !== 'string' ||
      typeof first.filename !== 'string'
    )
      return null;
    const integrity = typeof first.integrity === 'string' ? first.integrity : null;
    return { name: first.name, version: first.version, integrity, filename: first.filename.replace(/^.*[\\/]/, '') };
  } catch {
    return null;
  }
}

// npm's first stderr line is often just "npm error code E404"; its JSON on stdout says what failed.
function npmFailure(e: unknown): string {
  const err = e as { stderr?: string; stdout?: string; message?: string };
  const first = (err.stderr ?? '')
    .split('\n')
    .find((l) => l.trim() !== '')
    ?.trim();
  let summary: string | undefined;
  try {
    const json = JSON.parse(err.stdout ?? '') as { error?: { summary?: string } };
    summary = json.error?.summary;
  } catch {
    summary = undefined;
  }
  const line = first ?? err.message ?? 'unknown error';
  return summary && !line.includes(summary) ? `${line} (${summary})` : line;
}

const runNpm: NpmRunner = (args, signal) =>
  new Promise((resolve, reject) => {
    execFile(
      'npm',
      args,
      { signal, maxBuffer: 64 * 1024 * 1024, timeout: 5 * 60_000, windowsHide: true },
      (err, stdout, stderr) => {
        if (err) reject(Object.assign(err, { stdout, stderr }));
        else resolve(stdout);
      },
    );
  });
