// llama.cpp's names and row order for a LoRA on a GGUF base (docs/guide.md "Back to llama.cpp, Ollama and LM Studio"):
// the studio's seven target modules ↔ GGUF tensor names, the GGUF architecture a bundle's base has,
// and Llama's q/k row permutation (llama.cpp's converter reorders those rows for its interleaved RoPE).

/** Our module names → the GGUF tensor names inside block N (`blk.N.<name>.weight`). */
export const GGUF_MODULES: Record<string, string> = {
  q: 'attn_q',
  k: 'attn_k',
  v: 'attn_v',
  o: 'attn_output',
  gate: 'ffn_gate',
  up: 'ffn_up',
  down: 'ffn_down',
};
export const MODULE_OF_GGUF: Record<string, string> = Object.fromEntries(
  Object.entries(GGUF_MODULES).map(([m, g]) => [g, m]),
);
/** The order tensors are written in, per layer. */
export const MODULE_ORDER = Object.keys(GGUF_MODULES);

/** The GGUF architectures a LoRA can be written for: the ones the studio imports (Mistral is "llama"). */
export type GgufArch = 'llama' | 'qwen2';

export interface GgufBase {
  arch: GgufArch;
  /** q heads and k/v heads: Llama's q/k rows are permuted per head */
  heads: number;
  kvHeads: number;
}

interface ManifestLike {
  id: string;
  architecture: { family: string; heads: number; kv_heads: number };
  training_card: Record<string, unknown>;
}

/**
 * The GGUF base of a bundle, from where its training card says it came from; a sentence saying why
 * not otherwise. GGUF: the file's own general.architecture. Hugging Face Llama / Mistral: "llama"
 * (llama.cpp converts both so); Qwen2: "qwen2". Anything else (the studio's own 5 M default, a
 * random-init test model) has no GGUF of its base that llama.cpp could load the adapter into.
 */
export function ggufBaseOf(m: ManifestLike): GgufBase | string {
  const card = m.training_card;
  const kind = typeof card.kind === 'string' ? card.kind : 'unknown';
  const heads = { heads: m.architecture.heads, kvHeads: m.architecture.kv_heads };
  if (kind === 'gguf') {
    const arch = (card.gguf as { architecture?: unknown } | undefined)?.architecture;
    if (arch === 'llama' || arch === 'qwen2') return { arch, ...heads };
    return `bundle ${m.id} came from a GGUF whose architecture is ${JSON.stringify(arch)}; a GGUF LoRA can be written for llama and qwen2 bases only`;
  }
  if (kind === 'hf checkpoint') {
    const f = m.architecture.family;
    if (f === 'llama' || f === 'mistral') return { arch: 'llama', ...heads };
    if (f === 'qwen2') return { arch: 'qwen2', ...heads };
    return `bundle ${m.id} is a ${f} model; a GGUF LoRA can be written for Llama, Mistral and Qwen2 bases only`;
  }
  const what =
    kind === 'pretrained'
      ? "the studio's own base model, trained here with its own tokenizer"
      : kind === 'random init'
        ? 'a randomly initialised test model'
        : `a base of kind "${kind}"`;
  return (
    `bundle ${m.id} is ${what}: no GGUF file of that base exists for llama.cpp, Ollama or LM Studio to load, ` +
    `so a GGUF LoRA for it would have nothing to attach to (export it as PEFT instead, or use a bundle made ` +
    `from a GGUF or a Hugging Face Llama, Qwen2 or Mistral checkpoint)`
  );
}

/** How many heads a module's output rows are permuted in, on a llama GGUF (q and k only); 0: none. */
export function permutedHeads(base: GgufBase, module: string): number {
  if (base.arch !== 'llama') return 0;
  return module === 'q' ? base.heads : module === 'k' ? base.kvHeads : 0;
}

/**
 * For output row `g` of a llama GGUF q/k weight, the Hugging Face row it holds. llama.cpp's converter
 * (convert_hf_to_gguf.py, LlamaModel.permute) interleaves each head's two rotary halves:
 * GGUF row h·d + 2j + s holds HF row h·d + s·d/2 + j (d the head size, j < d/2, s ∈ {0, 1}).
 */
export function hfRowOf(g: number, rows: number, heads: number): number {
  const d = rows / heads;
  const h = Math.floor(g / d);
  const i = g - h * d;
  return h * d + (i % 2) * (d / 2) + Math.floor(i / 2);
}
