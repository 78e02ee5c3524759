// Graph I/O of bundle format v1 (docs/bundle-format.md "lm.onnx"). bundle.json lists the names as
// templates — `{i}` = layer, `{module}` = LoRA target, `{group}` = LoRA group — that session-table.ts expands.

export const LM_INPUTS_V1 = [
  'input_ids',
  'attention_mask',
  'position_ids',
  'past_key_values.{i}.key',
  'past_key_values.{i}.value',
] as const;
export const LM_LORA_INPUTS_V1 = ['lora.{i}.{module}.A', 'lora.{i}.{module}.B'] as const;
/** Format 2: `logits_to_keep` [1] (logits of the last n positions, 0 = all) after the positions, and
 * with bundle.json lora.groups one pair per group (q, k, v share the fused projection's "qkv"). */
export const LM_INPUTS_V2 = [
  'input_ids',
  'attention_mask',
  'position_ids',
  'logits_to_keep',
  'past_key_values.{i}.key',
  'past_key_values.{i}.value',
] as const;
export const LM_LORA_GROUP_INPUTS = ['lora.{i}.{group}.A', 'lora.{i}.{group}.B'] as const;
export const LM_OUTPUTS_V1 = ['logits', 'present.{i}.key', 'present.{i}.value', 'hidden_states'] as const;
/** Fused attention (io.lm.attention "fused"): the step's keys and values [b, s, kv·hd], not the whole cache. */
export const LM_OUTPUTS_FUSED = ['logits', 'step.{i}.key', 'step.{i}.value', 'hidden_states'] as const;
/** encoder.onnx (optional): tokens → the encoder layer's states, no past, no LoRA, no logits. */
export const ENCODER_INPUTS_V1 = ['input_ids', 'attention_mask', 'position_ids'] as const;
export const ENCODER_OUTPUTS_V1 = ['hidden_states'] as const;

export type KvKind = 'key' | 'value';
export const KV_KINDS: readonly KvKind[] = ['key', 'value'];
export const pastName = (layer: number, kind: KvKind) => `past_key_values.${layer}.${kind}`;
export const presentName = (layer: number, kind: KvKind) => `present.${layer}.${kind}`;
export const stepName = (layer: number, kind: KvKind) => `step.${layer}.${kind}`;
export const loraName = (layer: number, module: string, factor: 'A' | 'B') => `lora.${layer}.${module}.${factor}`;

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The input lists formats 1 and 2 allow: with LoRA pairs (per target in 1, per group in 2), or
 * without them (a plain export). */
export function lmInputsKind(inputs: readonly string[]): 'lora' | 'plain' | null {
  if (sameList(inputs, [...LM_INPUTS_V2, ...LM_LORA_GROUP_INPUTS])) return 'lora';
  if (sameList(inputs, [...LM_INPUTS_V1, ...LM_LORA_INPUTS_V1])) return 'lora';
  if (sameList(inputs, LM_INPUTS_V1) || sameList(inputs, LM_INPUTS_V2)) return 'plain';
  return null;
}

/** Whether lm.onnx takes `logits_to_keep` (format 2). */
export const keepsLogits = (inputs: readonly string[]) => inputs.includes('logits_to_keep');

/** The output list of lm.onnx: present.* with ONNX-op attention, step.* with fused attention. */
export const lmOutputsValid = (outputs: readonly string[], fused = false) =>
  sameList(outputs, fused ? LM_OUTPUTS_FUSED : LM_OUTPUTS_V1);
export const encoderIOValid = (inputs: readonly string[], outputs: readonly string[]) =>
  sameList(inputs, ENCODER_INPUTS_V1) && sameList(outputs, ENCODER_OUTPUTS_V1);
