// A bundle folder's card for the Models page: bundle.json read and checked (no ONNX session is
// opened), the base model's parameter count from its architecture, and the folder's size on disk.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelArchitecture } from '../../common/api/engine-schemas';
import type { ModelCard, ModelOrigin } from '../../common/api/model-schemas';
import type { BundleManifest } from '../engine/manifest';
import { readBundleManifest } from './bundle-gate';
import { chatTemplateKind, fileTypeName } from './gguf';

/** The manifest's architecture as the API reports it. */
export function architectureOf(a: BundleManifest['architecture']): ModelArchitecture {
  return {
    family: a.family,
    hidden: a.hidden,
    layers: a.layers,
    heads: a.heads,
    kvHeads: a.kv_heads,
    vocab: a.vocab,
    maxPositions: a.max_positions,
  };
}

/** Weights of a Llama-family base: embeddings, per-layer attention and MLP (biases where the
 *  architecture has them), RMSNorm weights, and the LM head unless it is tied. */
export function parameterCount(a: BundleManifest['architecture']): number {
  const q = a.heads * a.head_dim;
  const kv = a.kv_heads * a.head_dim;
  const attention = a.hidden * (q + 2 * kv) + q * a.hidden + (a.qkv_bias ? q + 2 * kv : 0) + (a.o_bias ? a.hidden : 0);
  const mlp = 3 * a.hidden * a.intermediate;
  const layer = attention + mlp + 2 * a.hidden;
  const embeddings = a.vocab * a.hidden * (a.tie_embeddings ? 1 : 2);
  return embeddings + a.layers * layer + a.hidden;
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(dir, entry.name))).size;
  }
  return total;
}

const textOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The chat template's format, from the bundle's tokenizer_config.json (null when it cannot be read). */
async function templateKind(dir: string, file: string): Promise<string | null> {
  try {
    const cfg = JSON.parse(await readFile(join(dir, file), 'utf8')) as { chat_template?: unknown };
    return typeof cfg.chat_template === 'string' ? chatTemplateKind(cfg.chat_template) : null;
  } catch {
    return null;
  }
}

/** A GGUF bundle's quantization: the file's type name, else its tensor types. */
function quantizationOf(card: Record<string, unknown>): string | null {
  if (card.kind !== 'gguf') return null;
  const g = (card.gguf ?? {}) as { file_type?: unknown; tensor_types?: unknown };
  const named = fileTypeName(g.file_type);
  if (named) return named;
  const types = g.tensor_types && typeof g.tensor_types === 'object' ? Object.keys(g.tensor_types) : [];
  return types.length ? types.join(', ') : null;
}

/** The card of the bundle in `dir`; throws (naming bundle.json and the field) when it is not one. */
export async function readCard(dir: string, origin: ModelOrigin, active: boolean): Promise<ModelCard> {
  // bundle.json through the read gate (main/files/read-gate.ts): a FIFO or /dev/zero never opened.
  const { manifest: m } = await readBundleManifest(dir);
  const a = m.architecture;
  const card = m.training_card;
  return {
    dir,
    id: m.id,
    origin,
    active,
    created: m.created,
    ...architectureOf(a),
    parameters: parameterCount(a),
    loraTargets: m.lora.targets.map((t) => t.module),
    rank: m.lora.default_rank,
    alpha: m.lora.alpha,
    dtype: textOf(card.dtype) ?? 'fp32',
    bytes: await folderBytes(dir),
    hypernet: m.hypernet?.kind ?? null,
    encoder: m.io.encoder !== undefined,
    source: card.kind === 'hf checkpoint' || card.kind === 'gguf' ? textOf(card.source) : null,
    quantization: quantizationOf(card),
    chatTemplate: await templateKind(dir, m.tokenizer.config),
  };
}
