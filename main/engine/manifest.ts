// bundle.json, formats pskills.bundle/1 and /2 — the zod form of docs/bundle-format.md. Errors name the field.
import { z } from 'zod';
import { nameProblem } from '../../common/api/skill-schemas';
import { invalid } from './errors';
import { encoderIOValid, keepsLogits, lmInputsKind, lmOutputsValid } from './graph-io';

export const FORMAT_V1 = 'pskills.bundle/1';
/** 2 = 1 with LoRA groups: lm.onnx takes lora.{i}.{group}.A|B (docs/bundle-format.md "LoRA groups"). */
export const FORMAT_V2 = 'pskills.bundle/2';
const FORMATS: readonly string[] = [FORMAT_V1, FORMAT_V2];
export const MANIFEST_FILE = 'bundle.json';

const count = z.int().positive();
const index = z.int().nonnegative();
const fileName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a plain file name inside the bundle folder');

/**
 * Sane upper bound on architecture.max_positions. The graph computes RoPE from position_ids in float32
 * (no table whose size could be checked), exact to 2^24; the real limit is the trained context, which
 * training_card.model.max_positions declares when present (checked below).
 */
export const MAX_POSITIONS = 2 ** 20;

const FileEntry = z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits'), bytes: index });

const Architecture = z.object({
  family: z.enum(['llama', 'qwen2', 'mistral']),
  hidden: count,
  layers: count,
  heads: count,
  kv_heads: count,
  head_dim: count,
  intermediate: count,
  vocab: count,
  max_positions: count.max(
    MAX_POSITIONS,
    `at most ${MAX_POSITIONS} (2^20) positions: a larger context cannot be checked against the graph`,
  ),
  rms_eps: z.number().positive(),
  rope: z.object({ theta: z.number().positive(), scaling: z.record(z.string(), z.unknown()).nullable() }),
  tie_embeddings: z.boolean(),
  qkv_bias: z.boolean(),
  o_bias: z.boolean(),
  sliding_window: count.nullable(),
});

const LoraModule = z.enum(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
const LoraTarget = z.object({ module: LoraModule, d_in: count, d_out: count });
/** One lora.{i}.{name}.A|B pair of lm.onnx (docs/bundle-format.md "LoRA groups"): its members' factors
 * side by side in the rank slots, each member's B at its column offset of the group's d_out. */
const LoraGroup = z.object({
  name: z.string().regex(/^[a-z_]+$/),
  d_in: count,
  d_out: count,
  modules: z.array(z.object({ module: LoraModule, offset: index })).min(1),
});

/** bundle.json `hypernet` (docs/bundle-format.md "hypernet.onnx and compiling a skill"). */
export const HYPERNET_INPUTS = ['states', 'mask'] as const;
export const HYPERNET_OUTPUTS = ['A.{module}', 'B.{module}'] as const;
const Hypernet = z.object({
  file: fileName,
  kind: z.enum(['perceiver', 't2l']),
  rank: count,
  d_enc: count,
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  chunk_combine: z.literal('mean'),
  params: index,
  /** Evaluation-only hypernetworks (condition name → file in `files`); compiling never reads them. */
  ablations: z.record(z.string(), fileName).optional(),
});

/** The bytes of one lm.onnx initializer a layered train step reads (docs/bundle-format.md "train_step"):
 * little-endian, row-major, `length` = the product of `shape` × the dtype's size. */
const WeightSpan = z.object({
  file: fileName,
  offset: index,
  length: count,
  dtype: z.enum(['float32', 'float16']),
  shape: z.array(count),
});
export type WeightSpan = z.infer<typeof WeightSpan>;

/** Optional: one distillation step per static (batch, length) bucket (docs/bundle-format.md "train_step").
 * kind "whole" (absent = whole): one inference graph per bucket (`file`). kind "layered": one decoder
 * layer's forward and its vector-Jacobian product, reused for every layer, and the head with the loss
 * (`layer`, `layer_vjp`, `head`), over the base's weights read from `weights`. Absent: Instant only. */
const TrainStepEntry = z.object({
  kind: z.enum(['whole', 'layered']).optional(),
  rank: count,
  top_k: count,
  ce_weight: z.number(),
  max_norm: z.number(),
  adam: z.object({ beta1: z.number(), beta2: z.number(), eps: z.number() }).optional(),
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  buckets: z
    .array(
      z.object({
        batch: count,
        length: count,
        file: fileName.optional(),
        layer: fileName.optional(),
        layer_vjp: fileName.optional(),
        /** The backward from what `layer` kept (its `saved.*` outputs): no forward recomputed. */
        layer_bwd: fileName.optional(),
        /** Bytes of the `saved.*` outputs one layer keeps, for the step's memory budget. */
        saved_bytes: z.number().int().nonnegative().optional(),
        head: fileName.optional(),
      }),
    )
    .min(1),
  weights: z
    .object({
      embed: WeightSpan,
      head: z.record(z.string(), WeightSpan),
      layers: z.array(z.record(z.string(), WeightSpan)),
    })
    .optional(),
});
export type TrainStepEntry = z.infer<typeof TrainStepEntry>;

const GraphIO = z.object({
  file: fileName,
  float_dtype: z.literal('float32'),
  inputs: z.array(z.string()),
  outputs: z.array(z.string()),
  // lm.onnx only: "fused" = onnxruntime's GroupQueryAttention (docs/bundle-format.md "Attention"); absent = ONNX ops.
  attention: z.enum(['ops', 'fused']).optional(),
});

const ManifestShape = z.object({
  format: z.enum([FORMAT_V1, FORMAT_V2]),
  id: z
    .string()
    .min(1)
    .superRefine((id, ctx) => {
      const why = nameProblem(id);
      if (why) ctx.addIssue({ code: 'custom', message: `the bundle id ${why}` });
    }),
  created: z.string().min(1),
  files: z.record(fileName, FileEntry),
  architecture: Architecture,
  lora: z.object({
    targets: z.array(LoraTarget).min(1),
    // Absent in bundles written before groups: then lm.onnx takes one pair per target.
    groups: z.array(LoraGroup).min(1).optional(),
    layers: z.array(index).min(1),
    default_rank: index,
    alpha: z.number(),
  }),
  encoder: z.object({
    kind: z.literal('lm_hidden'),
    layer: index,
    output: z.literal('hidden_states'),
    token_budget: count,
    chunk_overlap: index,
  }),
  tokenizer: z.object({ file: fileName, config: fileName, vocab_size: count }),
  special_tokens: z.object({ bos: index.nullable(), eos: index, pad: index, stop: z.array(index).min(1) }),
  // io.encoder: the optional encoder.onnx compile reads the states from (else lm.onnx's hidden_states).
  io: z.object({ lm: GraphIO, encoder: GraphIO.optional() }),
  // null in a base-only bundle; a reader that only generates ignores it.
  hypernet: Hypernet.nullable(),
  train_step: TrainStepEntry.optional(),
  // The distil recipe the exporter wrote from training/configs/distill.json (main/engine/distill-recipe.ts).
  distill: z
    .object({
      steps: count,
      lr: z.number().positive().finite(),
      batch: count,
      ce_weight: z.number().min(0).finite(),
      max_norm: z.number().positive().finite(),
      top_k: count,
      max_answer: count,
      questions: count,
      sources: z.array(z.string()).min(1),
      synth_sources: z.array(z.string()).min(1),
    })
    .optional(),
  training_card: z.record(z.string(), z.unknown()),
});
type Shape = z.infer<typeof ManifestShape>;
type Path = (string | number)[];
type Issue = (path: Path, message: string) => void;

/** Checks across fields, in the order their issues are reported. */
export const BundleManifest = ManifestShape.superRefine((m, ctx) => {
  const issue: Issue = (path, message) => ctx.addIssue({ code: 'custom', path, message });
  checkArchitecture(m, issue);
  checkLora(m, issue);
  checkRanges(m, issue);
  checkIo(m, issue);
  checkHypernet(m, issue);
  checkTrainStep(m, issue);
  checkListed(m, issue);
});
export type BundleManifest = z.infer<typeof BundleManifest>;

/** The trained context and the attention heads. */
function checkArchitecture(m: Shape, issue: Issue): void {
  const a = m.architecture;
  const trained = (m.training_card.model as { max_positions?: unknown } | undefined)?.max_positions;
  if (typeof trained === 'number' && a.max_positions > trained) {
    issue(
      ['architecture', 'max_positions'],
      `${a.max_positions}, but training_card.model.max_positions is ${trained}: the model was not built for more`,
    );
  }
  if (a.heads % a.kv_heads !== 0)
    issue(['architecture', 'kv_heads'], `heads ${a.heads} is not a multiple of kv_heads ${a.kv_heads}`);
}

/** Each LoRA target's shape against the architecture; each target in exactly one group, inside its columns. */
function checkLora(m: Shape, issue: Issue): void {
  const a = m.architecture;
  const q = a.heads * a.head_dim;
  const kv = a.kv_heads * a.head_dim;
  const dims = {
    q: [a.hidden, q],
    k: [a.hidden, kv],
    v: [a.hidden, kv],
    o: [q, a.hidden],
    gate: [a.hidden, a.intermediate],
    up: [a.hidden, a.intermediate],
    down: [a.intermediate, a.hidden],
  };
  const seen = new Set<string>();
  m.lora.targets.forEach((t, n) => {
    const [dIn, dOut] = dims[t.module];
    if (t.d_in !== dIn || t.d_out !== dOut)
      issue(
        ['lora', 'targets', n],
        `module ${t.module}: (d_in, d_out) = (${t.d_in}, ${t.d_out}), the architecture gives (${dIn}, ${dOut})`,
      );
    if (seen.has(t.module)) issue(['lora', 'targets', n, 'module'], `module ${t.module} is listed twice`);
    seen.add(t.module);
  });
  if (m.lora.groups) {
    const targets = new Map(m.lora.targets.map((t) => [t.module, t]));
    const grouped = new Set<string>();
    m.lora.groups.forEach((g, n) => {
      for (const [k, { module, offset }] of g.modules.entries()) {
        const t = targets.get(module);
        const at = ['lora', 'groups', n, 'modules', k];
        if (!t) issue(at, `module ${module} is not in lora.targets`);
        else if (t.d_in !== g.d_in) issue(at, `module ${module}: d_in ${t.d_in}, the group has ${g.d_in}`);
        else if (offset + t.d_out > g.d_out)
          issue(at, `module ${module}: columns ${offset}…${offset + t.d_out} pass the group's d_out ${g.d_out}`);
        if (grouped.has(module)) issue(at, `module ${module} is in two groups`);
        grouped.add(module);
      }
    });
    for (const t of m.lora.targets)
      if (!grouped.has(t.module)) issue(['lora', 'groups'], `target ${t.module} is in no group`);
  }
}

/** Every layer and token id the manifest names exists in the model. */
function checkRanges(m: Shape, issue: Issue): void {
  const a = m.architecture;
  m.lora.layers.forEach((l, n) => {
    if (l >= a.layers) issue(['lora', 'layers', n], `layer ${l} does not exist (the model has ${a.layers})`);
  });
  if (new Set(m.lora.layers).size !== m.lora.layers.length) issue(['lora', 'layers'], 'a layer is listed twice');
  if (m.encoder.layer > a.layers) issue(['encoder', 'layer'], `layer ${m.encoder.layer} > layers ${a.layers}`);
  if (m.tokenizer.vocab_size > a.vocab)
    issue(['tokenizer', 'vocab_size'], `${m.tokenizer.vocab_size} tokens but the model's vocab is ${a.vocab}`);
  for (const [key, id] of Object.entries(m.special_tokens)) {
    for (const [n, v] of (Array.isArray(id) ? id : [id]).entries()) {
      if (v !== null && v >= m.tokenizer.vocab_size)
        issue(
          ['special_tokens', key, ...(Array.isArray(id) ? [n] : [])],
          `id ${v} >= tokenizer vocab_size ${m.tokenizer.vocab_size}`,
        );
    }
  }
}

/** The graphs' input and output lists match the format (docs/bundle-format.md). */
function checkIo(m: Shape, issue: Issue): void {
  const kind = lmInputsKind(m.io.lm.inputs);
  const v2 = keepsLogits(m.io.lm.inputs);
  if (kind === null) issue(['io', 'lm', 'inputs'], 'not an input list of format 1 or 2 (see docs/bundle-format.md)');
  else if (v2 !== (m.format === FORMAT_V2))
    issue(
      ['io', 'lm', 'inputs'],
      v2
        ? `logits_to_keep and lora.{i}.{group} inputs are format ${FORMAT_V2}`
        : `format ${FORMAT_V2} lists logits_to_keep and lora.{i}.{group}.A|B (one pair per group)`,
    );
  else if (kind === 'lora' && v2 && !m.lora.groups)
    issue(['lora', 'groups'], 'required: lm.onnx takes lora.{i}.{group}.A|B');
  const fused = m.io.lm.attention === 'fused';
  if (!lmOutputsValid(m.io.lm.outputs, fused))
    issue(
      ['io', 'lm', 'outputs'],
      fused
        ? 'not the output list of fused attention (see docs/bundle-format.md "Attention")'
        : 'not the format v1 output list (see docs/bundle-format.md)',
    );
  const enc = m.io.encoder;
  if (enc && !encoderIOValid(enc.inputs, enc.outputs))
    issue(['io', 'encoder'], 'not the format v1 encoder I/O (see docs/bundle-format.md "encoder.onnx")');
}

/** The hypernetwork against the LoRA rank, the hidden size, the graph I/O and the encoder budget. */
function checkHypernet(m: Shape, issue: Issue): void {
  const a = m.architecture;
  const h = m.hypernet;
  if (!h) return;
  if (h.rank !== m.lora.default_rank)
    issue(['hypernet', 'rank'], `${h.rank}, but lora.default_rank is ${m.lora.default_rank} (they must be equal)`);
  if (h.d_enc !== a.hidden)
    issue(
      ['hypernet', 'd_enc'],
      `${h.d_enc}, but architecture.hidden is ${a.hidden} (the states are the LM's hidden_states)`,
    );
  if (h.inputs.join() !== HYPERNET_INPUTS.join())
    issue(['hypernet', 'inputs'], `${JSON.stringify(h.inputs)}, format v1 has ${JSON.stringify(HYPERNET_INPUTS)}`);
  if (h.outputs.join() !== HYPERNET_OUTPUTS.join())
    issue(['hypernet', 'outputs'], `${JSON.stringify(h.outputs)}, format v1 has ${JSON.stringify(HYPERNET_OUTPUTS)}`);
  if (m.encoder.chunk_overlap >= m.encoder.token_budget)
    issue(
      ['encoder', 'chunk_overlap'],
      `${m.encoder.chunk_overlap} must be smaller than token_budget ${m.encoder.token_budget}`,
    );
  if (m.encoder.token_budget > a.max_positions)
    issue(['encoder', 'token_budget'], `${m.encoder.token_budget} > architecture.max_positions ${a.max_positions}`);
}

/** Each bucket names the graphs of its kind; a layered step lists the base's weights. */
function checkTrainStep(m: Shape, issue: Issue): void {
  const ts = m.train_step;
  const layered = ts?.kind === 'layered';
  if (!ts) return;
  const need = layered ? (['layer', 'layer_vjp', 'head'] as const) : (['file'] as const);
  ts.buckets.forEach((b, j) => {
    for (const f of need)
      if (b[f] === undefined)
        issue(
          ['train_step', 'buckets', j, f],
          `required: a ${layered ? 'layered' : 'whole'} train step's bucket names its ${f} graph`,
        );
  });
  if (layered && !ts.weights)
    issue(['train_step', 'weights'], "required: a layered train step reads the base's weights by span");
  if (!layered && ts.weights)
    issue(['train_step', 'kind'], '"whole" (or absent), but weights are listed: a layered step says kind "layered"');
  if (layered && ts.weights) checkWeights(m, ts.weights, issue);
}

/** Each weight span's byte length against its dtype and shape, inside its listed file; one object per layer. */
function checkWeights(m: Shape, w: NonNullable<TrainStepEntry['weights']>, issue: Issue): void {
  const a = m.architecture;
  if (w.layers.length !== a.layers)
    issue(
      ['train_step', 'weights', 'layers'],
      `${w.layers.length} layers, but architecture.layers is ${a.layers} (one object per decoder layer)`,
    );
  const spans: [WeightSpan, Path][] = [
    [w.embed, ['train_step', 'weights', 'embed']],
    ...Object.entries(w.head).map(([n, s]) => [s, ['train_step', 'weights', 'head', n]] as [WeightSpan, Path]),
    ...w.layers.flatMap((l, i) =>
      Object.entries(l).map(([n, s]) => [s, ['train_step', 'weights', 'layers', i, n]] as [WeightSpan, Path]),
    ),
  ];
  for (const [s, path] of spans) {
    const want = s.shape.reduce((x, y) => x * y, 1) * (s.dtype === 'float16' ? 2 : 4);
    if (s.length !== want)
      issue([...path, 'length'], `${s.length} bytes, but ${s.dtype} [${s.shape.join(', ')}] is ${want} bytes`);
    const listed = m.files[s.file];
    if (!listed) issue([...path, 'file'], `${s.file} is not listed in files`);
    else if (s.offset + s.length > listed.bytes)
      issue(
        [...path, 'offset'],
        `${s.offset} + ${s.length} bytes runs past the end of ${s.file} (${listed.bytes} bytes)`,
      );
  }
  const [rows, cols] = w.embed.shape;
  if (w.embed.shape.length !== 2 || rows !== a.vocab || cols !== a.hidden)
    issue(
      ['train_step', 'weights', 'embed', 'shape'],
      `[${w.embed.shape.join(', ')}], expected [${a.vocab}, ${a.hidden}] (vocab, hidden)`,
    );
}

/** Every file the manifest names is listed in `files`. */
function checkListed(m: Shape, issue: Issue): void {
  const enc = m.io.encoder;
  const referenced: [string, Path][] = [
    [m.io.lm.file, ['io', 'lm', 'file']],
    [m.tokenizer.file, ['tokenizer', 'file']],
    [m.tokenizer.config, ['tokenizer', 'config']],
    ...(enc ? ([[enc.file, ['io', 'encoder', 'file']]] as [string, Path][]) : []),
    ...(m.hypernet ? ([[m.hypernet.file, ['hypernet', 'file']]] as [string, Path][]) : []),
    ...Object.entries(m.hypernet?.ablations ?? {}).map(
      ([name, file]) => [file, ['hypernet', 'ablations', name]] as [string, Path],
    ),
    ...(m.train_step?.buckets ?? []).flatMap((b, j) =>
      (['file', 'layer', 'layer_vjp', 'layer_bwd', 'head'] as const).flatMap((f) =>
        b[f] === undefined ? [] : [[b[f], ['train_step', 'buckets', j, f]] as [string, Path]],
      ),
    ),
  ];
  for (const [file, path] of referenced) if (!(file in m.files)) issue(path, `${file} is not listed in files`);
}

/** Parses bundle.json's JSON value. `where` prefixes messages (usually the file's path). */
export function parseManifest(json: unknown, where = MANIFEST_FILE): BundleManifest {
  const format = (json as { format?: unknown } | null)?.format;
  if (typeof format !== 'string' || !format.startsWith('pskills.bundle/')) {
    throw invalid(
      `${where}: not a pskills bundle manifest (format is ${JSON.stringify(format)}, expected "${FORMAT_V2}")`,
      { field: 'format' },
    );
  }
  if (!FORMATS.includes(format)) {
    throw invalid(
      `${where}: bundle format "${format}" is not supported; this studio reads "${FORMAT_V1}" and "${FORMAT_V2}" (update the studio or re-export the bundle)`,
      { field: 'format' },
    );
  }
  const parsed = BundleManifest.safeParse(json);
  if (parsed.success) {
    // Groups matter only where lm.onnx takes them (a format 1 reader ignores the unknown field).
    const grouped = parsed.data.io.lm.inputs.some((t) => t.includes('{group}'));
    return grouped ? parsed.data : { ...parsed.data, lora: { ...parsed.data.lora, groups: undefined } };
  }
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw invalid(`${where}: ${issues[0]}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`, {
    field: parsed.error.issues[0]?.path.join('.'),
    issues,
  });
}
