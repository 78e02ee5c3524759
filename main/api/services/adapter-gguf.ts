// adapters.export as gguf / ollama and adapters.import of a `.gguf` (docs/guide.md "Back to llama.cpp,
// Ollama and LM Studio"): the bundle's GGUF base from its stored bundle.json, the Modelfile's FROM from
// its provenance, the chat template and stop strings from its tokenizer files. The file formats are
// main/adapters/gguf-lora-*.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { StudioError } from '../../../common/errors';
import { writeGgufLoraFile, writeOllamaFolder } from '../../adapters/gguf-lora-file';
import { ggufBaseOf, type GgufBase } from '../../adapters/gguf-lora-names';
import { ggufLoraToAdapter, readGgufLoraFile } from '../../adapters/gguf-lora-read';
import type { GgufDtype } from '../../adapters/gguf-lora-write';
import type { Adapter } from '../../adapters/types';
import type { BundleManifest } from '../../engine';
import { readGatedText } from '../../files/read-gate';
import type { StoredAdapter } from '../../store/adapters-repo';

const invalid = (message: string) => new StudioError('invalid_input', message);
const asStudio = (err: unknown) => (err instanceof StudioError ? err : invalid((err as Error).message));

/** The bundle's GGUF base, or a refusal that says why this adapter has none. */
export function ggufBaseOrRefuse(manifest: BundleManifest, what: string): GgufBase {
  const base = ggufBaseOf(manifest);
  if (typeof base === 'string') throw invalid(`${what}: ${base}`);
  return base;
}

/** Provenance written into the GGUF (llama.cpp ignores keys it does not know). */
function provenance(row: StoredAdapter): Record<string, string> {
  const s: Record<string, string> = {
    'pskills.adapter.key': row.key,
    'pskills.bundle.id': row.bundle.id,
    'pskills.bundle.sha256': row.bundle.sha256,
  };
  if (row.skill) s['pskills.skill'] = `${row.skill.name}@${row.skill.version}`;
  return s;
}

const nameOf = (row: StoredAdapter) => row.name ?? (row.skill ? row.skill.name : row.key.slice(0, 12));

export async function exportGguf(
  row: StoredAdapter,
  adapter: Adapter,
  manifest: BundleManifest,
  input: { dir: string; dtype?: GgufDtype; overwrite?: boolean },
): Promise<{ dir: string; files: string[] }> {
  const base = ggufBaseOrRefuse(manifest, `adapter ${row.key.slice(0, 12)} cannot be exported as a GGUF LoRA`);
  await writeGgufLoraFile(input.dir, adapter, base, {
    dtype: input.dtype ?? 'f32',
    name: nameOf(row),
    strings: provenance(row),
    overwrite: input.overwrite ?? false,
  }).catch((err: unknown) => {
    throw asStudio(err);
  });
  return { dir: dirname(input.dir), files: [basename(input.dir)] };
}

/** The base GGUF's path: `given`, else the card's source_path, else the source file beside the bundle. */
function baseGgufPath(manifest: BundleManifest, bundleDir: string, given: string | undefined): string {
  const card = manifest.training_card as { kind?: unknown; source?: unknown; source_path?: unknown };
  const candidates = given
    ? [given]
    : [
        typeof card.source_path === 'string' ? card.source_path : null,
        card.kind === 'gguf' && typeof card.source === 'string' ? join(dirname(bundleDir), card.source) : null,
      ].filter((p): p is string => p !== null);
  for (const p of candidates) if (existsSync(p) && statSync(p).isFile()) return p;
  if (given) throw invalid(`--base ${given}: no such file`);
  const where = candidates.length ? ` (it was at ${candidates[0]}, which is gone)` : '';
  const from =
    card.kind === 'gguf'
      ? `the GGUF bundle ${manifest.id} was made from is not found${where}`
      : `bundle ${manifest.id} was made from a Hugging Face checkpoint, not a GGUF`;
  throw invalid(
    `an Ollama Modelfile needs the base GGUF for FROM: ${from}; pass --base FILE.gguf (base in the API) with the GGUF of that model`,
  );
}

/** The chat template and the stop strings, from the bundle folder's tokenizer files. */
async function chatOf(
  manifest: BundleManifest,
  bundleDir: string,
): Promise<{ template: string | null; stops: string[] }> {
  const config = JSON.parse(await readGatedText(join(bundleDir, manifest.tokenizer.config), 'bundle JSON file')) as {
    chat_template?: unknown;
  };
  const tok = JSON.parse(await readGatedText(join(bundleDir, manifest.tokenizer.file), 'bundle JSON file')) as {
    added_tokens?: { id: number; content: string }[];
    model?: { vocab?: Record<string, number> | [string, number][] };
  };
  const byId = new Map<number, string>();
  const vocab = tok.model?.vocab;
  if (vocab && !Array.isArray(vocab)) for (const [t, id] of Object.entries(vocab)) byId.set(id, t);
  for (const a of tok.added_tokens ?? []) byId.set(a.id, a.content);
  const stops = [...new Set(manifest.special_tokens.stop)].flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  return { template: typeof config.chat_template === 'string' ? config.chat_template : null, stops };
}

export async function exportOllama(
  row: StoredAdapter,
  adapter: Adapter,
  bundle: { manifest: BundleManifest; dir: string },
  input: { dir: string; dtype?: GgufDtype; overwrite?: boolean; base?: string },
  sidecar: Record<string, unknown>,
): Promise<{ dir: string; files: string[] }> {
  const { manifest } = bundle;
  const base = ggufBaseOrRefuse(manifest, `adapter ${row.key.slice(0, 12)} cannot be exported for Ollama`);
  const from = baseGgufPath(manifest, bundle.dir, input.base);
  const chat = await chatOf(manifest, bundle.dir).catch((err: unknown) => {
    throw invalid(
      `bundle ${manifest.id} at ${bundle.dir}: its tokenizer files cannot be read (${(err as Error).message})`,
    );
  });
  const files = await writeOllamaFolder(input.dir, adapter, base, {
    dtype: input.dtype ?? 'f32',
    name: nameOf(row),
    strings: provenance(row),
    sidecar: { ...sidecar, base: from },
    overwrite: input.overwrite ?? false,
    modelfile: {
      from,
      chatTemplate: chat.template,
      stops: chat.stops,
      comments: [
        `pskills adapter ${row.key.slice(0, 12)} (${nameOf(row)}) on bundle ${manifest.id}`,
        `ollama create NAME -f Modelfile (in this folder)`,
      ],
    },
  }).catch((err: unknown) => {
    throw asStudio(err);
  });
  return { dir: input.dir, files };
}

/** A llama.cpp LoRA file for the current bundle: its architecture and every tensor's shape must match. */
export async function importGguf(file: string, manifest: BundleManifest): Promise<Adapter> {
  const base = ggufBaseOrRefuse(manifest, `${file}: a llama.cpp LoRA cannot go into the current bundle`);
  const dims = new Map(manifest.lora.targets.map((t) => [t.module, { dIn: t.d_in, dOut: t.d_out }]));
  try {
    return ggufLoraToAdapter(await readGgufLoraFile(file), base, dims, file);
  } catch (err) {
    throw asStudio(err);
  }
}
