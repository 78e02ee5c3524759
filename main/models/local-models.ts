// GGUF models already on this computer, in the folders LM Studio and Ollama keep them in
// (docs/guide.md, "Bring a real checkpoint"): LM Studio's <models>/<publisher>/<model>/<file>.gguf, and Ollama's
// manifests (<models>/manifests/<registry>/<namespace>/<model>/<tag>, JSON) whose model layer names a
// blob (<models>/blobs/sha256-<hex>, a GGUF without an extension). Folders that do not exist are
// skipped. Every header is read through the GGUF gate off the main thread (gguf-reader.ts); a file
// the gate refuses (a FIFO, a header over its limits, past the time budget) is listed as skipped
// with why, and one the importer would refuse (an unsupported architecture) with its problem.
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { LocalModel, ModelList } from '../../common/api/model-schemas';
import { readGatedSync } from '../files/read-gate';
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
const MAX_DEPTH = 4;
const MAX_FILES = 500;

function walk(dir: string, depth: number, visit: (path: string) => void): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable: nothing to list there
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (depth < MAX_DEPTH) walk(path, depth + 1, visit);
    } else visit(path); // a FIFO or link too: the gate says why it is skipped
  }
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

type Skipped = ModelList['skipped'][number];

/** The file's identity for the cache (lstat: a FIFO or device is never opened here). */
function identity(path: string): string | null {
  try {
    const st = lstatSync(path);
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
  const key = identity(path);
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

/** Every GGUF in the folders that exist, LM Studio's first (projector files, mmproj, are left out),
 *  and the files the gate refused. */
export async function findLocalModels(
  folders: readonly ModelFolder[],
  reader: GgufReader,
  cache: HeaderCache = new Map(),
): Promise<{ found: LocalModel[]; skipped: Skipped[] }> {
  const candidates: { app: ModelFolder['app']; path: string; label: string }[] = [];
  for (const f of folders) {
    if (!existsSync(f.dir)) continue;
    if (f.app === 'lmstudio') {
      walk(f.dir, 0, (path) => {
        const name = path.split(sep).at(-1)!;
        if (!/\.gguf$/i.test(name) || /^mmproj/i.test(name)) return;
        candidates.push({ app: 'lmstudio', path, label: relative(f.dir, path).split(sep).join('/') });
      });
    } else {
      const manifests = join(f.dir, 'manifests');
      walk(manifests, 0, (path) => {
        const parts = relative(manifests, path).split(sep);
        if (parts.length !== 4) return; // registry/namespace/model/tag
        let digest: unknown;
        try {
          const text = readGatedSync(path, 'Ollama manifest').toString('utf8');
          const m = JSON.parse(text) as { layers?: { mediaType?: string; digest?: string }[] };
          digest = m.layers?.find((l) => l.mediaType === OLLAMA_MODEL_LAYER)?.digest;
        } catch {
          return; // not a manifest (or not a regular file)
        }
        if (typeof digest !== 'string' || !/^sha256[:-][0-9a-f]{64}$/.test(digest)) return;
        const blob = join(f.dir, 'blobs', digest.replace(':', '-'));
        const [registry, ns, model, tag] = parts as [string, string, string, string];
        const label = `${registry === 'registry.ollama.ai' && ns === 'library' ? '' : `${ns}/`}${model}:${tag}`;
        candidates.push({ app: 'ollama', path: blob, label });
      });
    }
  }
  const found: LocalModel[] = [];
  const skipped: Skipped[] = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (seen.has(c.path) || found.length + skipped.length >= MAX_FILES) continue;
    seen.add(c.path);
    const m = await describe(c.app, c.path, c.label, cache, reader);
    if (m && 'reason' in m) skipped.push(m);
    else if (m) found.push(m);
  }
  return { found, skipped };
}
