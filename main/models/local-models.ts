// GGUF models already on this computer, in the folders LM Studio and Ollama keep them in
// (docs/guide.md, "Bring a real checkpoint"): LM Studio's <models>/<publisher>/<model>/<file>.gguf, and Ollama's
// manifests (<models>/manifests/<registry>/<namespace>/<model>/<tag>, JSON) whose model layer names a
// blob (<models>/blobs/sha256-<hex>, a GGUF without an extension). Folders that do not exist are
// skipped. The walk and the manifest reads are asynchronous, a folder's entries read in batches and
// capped (SCAN_LIMITS), so the event loop the web host answers on is never held by a big folder; every
// header is read through the GGUF gate off the main thread (gguf-reader.ts). A file the gate refuses (a
// FIFO, a header over its limits, past the time budget), a manifest that cannot be read, and a folder cut
// at a cap are listed as skipped with why; a file the importer would refuse (an unsupported
// architecture) with its problem (docs/security.md "GGUF files").
import { existsSync } from 'node:fs';
import { lstat, opendir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { LocalModel, ModelList } from '../../common/api/model-schemas';
import { GateError, readGated } from '../files/read-gate';
import { chatTemplateKind, type GgufSummary } from './gguf';
import type { GgufReader } from './gguf-reader';

export interface ModelFolder {
  app: 'lmstudio' | 'ollama';
  dir: string;
}

/** The usual folders under `home` (and OLLAMA_MODELS when set), existing or not. */
export function modelFolders(home: string, env: NodeJS.ProcessEnv = process.env): ModelFolder[] {
  const folders: ModelFolder[] = [
    { app: 'lmstudio', dir: join(home, '.lmstudio', 'models') },
    { app: 'lmstudio', dir: join(home, '.cache', 'lm-studio', 'models') },
    { app: 'ollama', dir: join(home, '.ollama', 'models') },
    { app: 'ollama', dir: '/usr/share/ollama/.ollama/models' },
  ];
  if (env.OLLAMA_MODELS) folders.push({ app: 'ollama', dir: env.OLLAMA_MODELS });
  return folders;
}

const OLLAMA_MODEL_LAYER = 'application/vnd.ollama.image.model';

/** How much of a person's folders one scan reads: past a cap the rest is not read, and `skipped` says so. */
export const SCAN_LIMITS = {
  /** Folder levels below LM Studio's models folder or Ollama's manifests folder. */
  depth: 4,
  /** Entries read from one folder (60,000 files in one folder held the web host 2.2 s when read at once). */
  entriesPerFolder: 10_000,
  /** Entries read in one scan root, all its folders together. */
  entriesPerRoot: 50_000,
  /** GGUF files (and Ollama manifests) looked at in one scan. */
  files: 500,
};
export type ScanLimits = typeof SCAN_LIMITS;

type Skipped = ModelList['skipped'][number];

const n = (v: number) => v.toLocaleString('en-US');

/** Walks `root` depth first, each folder's entries in code-unit order of their names; `visit` is called for every entry that is not a folder (a FIFO or link too: the gate
 *  says why it is skipped). Reads go through the thread pool in batches, so the event loop turns between
 *  them; a cap reached is reported once through `cut`. Stops when `visit` returns false. */
async function walk(
  root: string,
  limits: ScanLimits,
  visit: (path: string) => Promise<boolean>,
  cut: (dir: string, reason: string) => void,
): Promise<void> {
  let left = limits.entriesPerRoot;
  const folder = async (dir: string, depth: number): Promise<boolean> => {
    const names: { name: string; isDir: boolean }[] = [];
    try {
      const d = await opendir(dir, { bufferSize: 64 });
      try {
        for await (const e of d) {
          if (names.length >= limits.entriesPerFolder || left <= 0) {
            cut(
              dir,
              left <= 0
                ? `more than ${n(limits.entriesPerRoot)} entries under ${root}; the rest were not read`
                : `more than ${n(limits.entriesPerFolder)} entries in one folder; the first ${n(limits.entriesPerFolder)} the system listed were read, the rest not`,
            );
            break;
          }
          left--;
          if (!e.name.startsWith('.')) names.push({ name: e.name, isDir: e.isDirectory() });
        }
      } finally {
        await d.close().catch(() => undefined); // for await closes it when it ends; break leaves it open
      }
    } catch {
      return true; // unreadable: nothing to list there
    }
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of names) {
      const path = join(dir, e.name);
      if (e.isDir) {
        if (depth < limits.depth && !(await folder(path, depth + 1))) return false;
      } else if (!(await visit(path))) return false;
    }
    return true;
  };
  await folder(root, 0);
}

/** A name made into a bundle folder id (letters, digits, . _ -). */
export function idFrom(name: string): string {
  return (
    name
      .replace(/\.gguf$/i, '')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+|-+$/g, '')
      .slice(0, 64) || 'gguf'
  );
}

export type HeaderCache = Map<
  string,
  { key: string; summary: GgufSummary | null; problem: string | null; refused: string | null }
>;

/** The file's identity for the cache (lstat: a FIFO or device is never opened here). */
async function identity(path: string): Promise<string | null> {
  try {
    const st = await lstat(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}:${st.mode}`;
  } catch {
    return null;
  }
}

async function describe(
  app: ModelFolder['app'],
  path: string,
  label: string,
  cache: HeaderCache,
  reader: GgufReader,
): Promise<LocalModel | Skipped | null> {
  const key = await identity(path);
  if (key === null) return null;
  let hit = cache.get(path);
  if (hit?.key !== key) {
    const r = await reader.inspect(path);
    if (!r.ok && r.missing) return null;
    hit = r.ok
      ? { key, summary: r.inspection.summary, problem: r.inspection.problem, refused: null }
      : { key, summary: null, problem: null, refused: r.reason };
    cache.set(path, hit);
  }
  if (hit.refused !== null) return { app, path, label, reason: hit.refused };
  const s = hit.summary!;
  return {
    app,
    path,
    label,
    suggestedId: idFrom(label),
    bytes: s.bytes,
    family: s.family,
    name: s.name,
    parameters: s.parameters,
    quantization: s.quantization,
    context: s.context,
    chatTemplate: chatTemplateKind(s.chatTemplate),
    problem: hit.problem,
  };
}

/** Ollama's manifest at `path`: the digest its model layer names, or why it is skipped (null: not a
 *  model, e.g. a manifest without a model layer). Read through the gate: a FIFO, a device or a file over
 *  the manifest cap is refused unopened, and listed, not passed over in silence. */
async function manifestDigest(path: string): Promise<{ digest: string } | { reason: string } | null> {
  let m: { layers?: { mediaType?: string; digest?: string }[] };
  try {
    m = JSON.parse((await readGated(path, 'Ollama manifest')).toString('utf8')) as typeof m;
  } catch (e) {
    if (e instanceof GateError) return e.code === 'not_found' ? null : { reason: `manifest: ${e.reason}` };
    return { reason: 'manifest: not valid JSON' };
  }
  const digest = Array.isArray(m?.layers) ? m.layers.find((l) => l?.mediaType === OLLAMA_MODEL_LAYER)?.digest : null;
  if (digest === undefined || digest === null) return null;
  if (typeof digest !== 'string' || !/^sha256[:-][0-9a-f]{64}$/.test(digest))
    return { reason: "manifest: its model layer's digest is not sha256:<64 hex digits>" };
  return { digest };
}

/** Every GGUF in the folders that exist, LM Studio's first (projector files, mmproj, are left out),
 *  and the files the gate refused, the manifests that could not be read and the folders cut at a cap. */
export async function findLocalModels(
  folders: readonly ModelFolder[],
  reader: GgufReader,
  cache: HeaderCache = new Map(),
  limits: ScanLimits = SCAN_LIMITS,
): Promise<{ found: LocalModel[]; skipped: Skipped[] }> {
  const found: LocalModel[] = [];
  const skipped: Skipped[] = [];
  const seen = new Set<string>();
  let looked = 0;
  let full = false;
  /** false once `limits.files` files were looked at: the scan stops there, and says so once. */
  const room = (app: ModelFolder['app'], dir: string): boolean => {
    if (looked < limits.files) return true;
    if (!full)
      skipped.push({
        app,
        path: dir,
        label: dir,
        reason: `more than ${n(limits.files)} model files and manifests; the rest were not read`,
      });
    full = true;
    return false;
  };
  const add = async (app: ModelFolder['app'], path: string, label: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const m = await describe(app, path, label, cache, reader);
    if (m && 'reason' in m) skipped.push(m);
    else if (m) found.push(m);
  };
  for (const f of folders) {
    if (full) break;
    if (!existsSync(f.dir)) continue;
    const cut = (dir: string, reason: string) =>
      skipped.push({ app: f.app, path: dir, label: `${relative(f.dir, dir).split(sep).join('/') || '.'}/`, reason });
    if (f.app === 'lmstudio') {
      await walk(
        f.dir,
        limits,
        async (path) => {
          const name = path.split(sep).at(-1)!;
          if (!/\.gguf$/i.test(name) || /^mmproj/i.test(name)) return true;
          if (!room(f.app, f.dir)) return false;
          looked++;
          await add('lmstudio', path, relative(f.dir, path).split(sep).join('/'));
          return true;
        },
        cut,
      );
    } else {
      const manifests = join(f.dir, 'manifests');
      await walk(
        manifests,
        limits,
        async (path) => {
          const parts = relative(manifests, path).split(sep);
          if (parts.length !== 4) return true; // registry/namespace/model/tag
          if (!room(f.app, f.dir)) return false;
          looked++;
          const [registry, ns, model, tag] = parts as [string, string, string, string];
          const label = `${registry === 'registry.ollama.ai' && ns === 'library' ? '' : `${ns}/`}${model}:${tag}`;
          const m = await manifestDigest(path);
          if (m && 'reason' in m) skipped.push({ app: 'ollama', path, label, reason: m.reason });
          else if (m) await add('ollama', join(f.dir, 'blobs', m.digest.replace(':', '-')), label);
          return true;
        },
        cut,
      );
    }
  }
  return { found, skipped };
}
