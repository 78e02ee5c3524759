// GGUF models already on this computer, in the folders LM Studio and Ollama keep them in
// (docs/guide.md, "Bring a real checkpoint"): LM Studio's <models>/<publisher>/<model>/<file>.gguf, and Ollama's
// manifests (<models>/manifests/<registry>/<namespace>/<model>/<tag>, JSON) whose model layer names a
// blob (<models>/blobs/sha256-<hex>, a GGUF without an extension). Folders that do not exist are
// skipped; a file whose header cannot be read is listed with why.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { LocalModel } from '../../common/api/model-schemas';
import { chatTemplateKind, readGgufHeader, type GgufSummary } from './gguf';

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
    if (e.isDirectory() && depth < MAX_DEPTH) walk(path, depth + 1, visit);
    else if (e.isFile()) visit(path);
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

export type HeaderCache = Map<string, { key: string; summary: GgufSummary | null; problem: string | null }>;

function describe(app: ModelFolder['app'], path: string, label: string, cache: HeaderCache): LocalModel | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  const key = `${st.size}:${st.mtimeMs}`;
  let hit = cache.get(path);
  if (hit?.key !== key) {
    try {
      hit = { key, summary: readGgufHeader(path), problem: null };
    } catch (err) {
      let summary: GgufSummary | null = null;
      try {
        summary = readGgufHeader(path, { check: false });
      } catch {
        // not even a header: only the problem is shown
      }
      hit = { key, summary, problem: err instanceof Error ? err.message : String(err) };
    }
    cache.set(path, hit);
  }
  const s = hit.summary;
  return {
    app,
    path,
    label,
    suggestedId: idFrom(label),
    bytes: st.size,
    family: s?.family ?? null,
    name: s?.name ?? null,
    parameters: s?.parameters ?? null,
    quantization: s?.quantization ?? null,
    context: s?.context ?? null,
    chatTemplate: s ? chatTemplateKind(s.chatTemplate) : null,
    problem: hit.problem,
  };
}

/** Every GGUF in the folders that exist, LM Studio's first; projector files (mmproj) are left out. */
export function findLocalModels(folders: readonly ModelFolder[], cache: HeaderCache = new Map()): LocalModel[] {
  const found: LocalModel[] = [];
  const seen = new Set<string>();
  const add = (m: LocalModel | null) => {
    if (!m || seen.has(m.path) || found.length >= MAX_FILES) return;
    seen.add(m.path);
    found.push(m);
  };
  for (const f of folders) {
    if (!existsSync(f.dir)) continue;
    if (f.app === 'lmstudio') {
      walk(f.dir, 0, (path) => {
        const name = path.split(sep).at(-1)!;
        if (!/\.gguf$/i.test(name) || /^mmproj/i.test(name)) return;
        add(describe('lmstudio', path, relative(f.dir, path).split(sep).join('/'), cache));
      });
    } else {
      const manifests = join(f.dir, 'manifests');
      walk(manifests, 0, (path) => {
        const parts = relative(manifests, path).split(sep);
        if (parts.length !== 4) return; // registry/namespace/model/tag
        let digest: unknown;
        try {
          const m = JSON.parse(readFileSync(path, 'utf8')) as { layers?: { mediaType?: string; digest?: string }[] };
          digest = m.layers?.find((l) => l.mediaType === OLLAMA_MODEL_LAYER)?.digest;
        } catch {
          return; // not a manifest
        }
        if (typeof digest !== 'string' || !/^sha256[:-][0-9a-f]{64}$/.test(digest)) return;
        const blob = join(f.dir, 'blobs', digest.replace(':', '-'));
        const [registry, ns, model, tag] = parts as [string, string, string, string];
        const label = `${registry === 'registry.ollama.ai' && ns === 'library' ? '' : `${ns}/`}${model}:${tag}`;
        add(describe('ollama', blob, label, cache));
      });
    }
  }
  return found;
}
