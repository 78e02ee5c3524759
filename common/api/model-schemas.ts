// DTOs of the Models page: the bundles the studio knows with their cards, which one is active, and
// a bundle made from a local Hugging Face checkpoint or GGUF file (the code of `pskills bundle create
// --from-hf | --from-gguf`), and the GGUF files LM Studio and Ollama keep on this computer.
import { z } from 'zod';
import { ModelArchitecture } from './engine-schemas';
import { AbsoluteDir } from './paths';

export const LORA_MODULES = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;
export const LoraModule = z.enum(LORA_MODULES);
export type LoraModule = z.infer<typeof LoraModule>;

export const BUNDLE_DTYPES = ['fp32', 'fp16'] as const;
export const BundleDtype = z.enum(BUNDLE_DTYPES);
export type BundleDtype = z.infer<typeof BundleDtype>;

/** Where a bundle came from: shipped with the app, made in the studio's data folder, or a folder
 *  loaded from elsewhere (Playground, CLI --bundle) that the store remembers. */
export const ModelOrigin = z.enum(['default', 'user', 'loaded']);
export type ModelOrigin = z.infer<typeof ModelOrigin>;

export const ModelCard = z.object({
  dir: z.string(),
  id: z.string(),
  origin: ModelOrigin,
  /** The engine's current bundle (before the first load: the one it will load first). */
  active: z.boolean(),
  created: z.string(),
  ...ModelArchitecture.shape,
  /** Weights of the base model, counted from the architecture. */
  parameters: z.number().int().nonnegative(),
  loraTargets: z.array(z.string()),
  rank: z.number().int(),
  alpha: z.number(),
  /** Weight storage: the training card's dtype, else fp32 (only the HF exporter writes fp16). */
  dtype: z.string(),
  /** Every file of the folder, bytes. */
  bytes: z.number().int().nonnegative(),
  /** The hypernetwork's kind (perceiver, t2l) or null: a base-only bundle generates but cannot compile. */
  hypernet: z.string().nullable(),
  encoder: z.boolean(),
  /** The checkpoint folder's or GGUF file's name for a bundle made from one. */
  source: z.string().nullable(),
  /** A GGUF bundle: the file's quantization (Q4_K_M), its weights dequantized into the bundle. */
  quantization: z.string().nullable(),
  /** The chat template's format (ChatML, Llama 3, …, custom) from tokenizer_config.json; null when unreadable. */
  chatTemplate: z.string().nullable(),
});
export type ModelCard = z.infer<typeof ModelCard>;

/** A GGUF file found in LM Studio's or Ollama's models folder, described from its header. */
export const LocalModel = z.object({
  app: z.enum(['lmstudio', 'ollama']),
  /** The .gguf file (an Ollama blob has no extension). */
  path: z.string(),
  /** publisher/model/file.gguf (LM Studio) or model:tag (Ollama). */
  label: z.string(),
  /** The bundle id an import uses unless another is given. */
  suggestedId: z.string(),
  bytes: z.number().int().nonnegative(),
  family: z.string().nullable(),
  name: z.string().nullable(),
  parameters: z.number().int().nonnegative().nullable(),
  quantization: z.string().nullable(),
  context: z.number().int().nullable(),
  chatTemplate: z.string().nullable(),
  /** Why the importer would refuse it (an unsupported architecture or quantization, a truncated file). */
  problem: z.string().nullable(),
});
export type LocalModel = z.infer<typeof LocalModel>;

export const ModelList = z.object({
  bundles: z.array(ModelCard),
  /** Folders that look like bundles but whose bundle.json could not be read, with why. */
  problems: z.array(z.object({ dir: z.string(), message: z.string() })),
  /** Where bundles made in the studio are written (<data folder>/bundles). */
  userDir: z.string(),
  /** GGUF files in LM Studio's and Ollama's folders that exist (`searched`), ready to import. */
  found: z.array(LocalModel),
  /** Files there that the GGUF gate refused (not a regular file, a header over its limits, past the
   *  time budget): listed with why, never imported (docs/security.md "GGUF files"). */
  skipped: z.array(
    z.object({ app: z.enum(['lmstudio', 'ollama']), path: z.string(), label: z.string(), reason: z.string() }),
  ),
  searched: z.array(z.string()),
});
export type ModelList = z.infer<typeof ModelList>;

/** A folder name inside <data folder>/bundles: no separators, no leading dot. */
export const BundleFolderId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    'letters, digits, ".", "_" or "-" (at most 64), starting with a letter or digit',
  );

export const ModelCreateInput = z
  .object({
    /** A Llama, Qwen2 or Mistral checkpoint folder (config.json, safetensors, tokenizer files), or a
     *  GGUF file of one (LM Studio, Ollama, llama.cpp): no hypernetwork, skills compile by distillation. */
    source: AbsoluteDir,
    dtype: BundleDtype.optional(),
    /** Default: all seven modules. */
    loraTargets: z
      .array(LoraModule)
      .min(1, 'choose at least one LoRA target')
      .refine((t) => new Set(t).size === t.length, 'a LoRA target is listed twice')
      .optional(),
    /** none: a base-only bundle; init: a fresh hypernetwork whose adapters are ΔW = 0 until trained. */
    hypernet: z.enum(['none', 'init']).optional(),
    /** The new bundle's folder and id; default: the checkpoint folder's name. */
    id: BundleFolderId.optional(),
  })
  .strict();
export type ModelCreateInput = z.infer<typeof ModelCreateInput>;

/** One exporter step ("[2/4] exporting lm.onnx" from the Python side). */
export const ModelCreateProgress = z.object({
  step: z.number().int().nonnegative(),
  steps: z.number().int().positive(),
  message: z.string(),
});
export type ModelCreateProgress = z.infer<typeof ModelCreateProgress>;
