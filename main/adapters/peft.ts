// PEFT LoRA directories (adapter_config.json + adapter_model.safetensors) ↔ our Adapter.
// PEFT keeps lora_A as [r, d_in] and lora_B as [d_out, r] under the base model's key names;
// we keep A [d_in, r] and B [r, d_out]: a transpose each way, alpha and rank unchanged.
import { z } from 'zod';
import { targetKey, type Adapter, type LoraPair, type TargetKey } from './types';
import { readSafetensors, writeSafetensors, type NamedTensor } from './safetensors';

/** Our module names → the Llama/Qwen2/Mistral module paths inside a decoder layer. */
export const HF_MODULES: Record<string, string> = {
  q: 'self_attn.q_proj',
  k: 'self_attn.k_proj',
  v: 'self_attn.v_proj',
  o: 'self_attn.o_proj',
  gate: 'mlp.gate_proj',
  up: 'mlp.up_proj',
  down: 'mlp.down_proj',
};
const MODULE_OF = Object.fromEntries(Object.entries(HF_MODULES).map(([m, path]) => [path, m]));

export const PeftConfig = z.looseObject({
  peft_type: z.literal('LORA'),
  r: z.number().int().nonnegative(),
  lora_alpha: z.number(),
  target_modules: z.union([z.array(z.string()), z.string()]),
  use_rslora: z.boolean().optional(),
  use_dora: z.boolean().optional(),
  fan_in_fan_out: z.boolean().optional(),
  rank_pattern: z.record(z.string(), z.unknown()).optional(),
  alpha_pattern: z.record(z.string(), z.unknown()).optional(),
  base_model_name_or_path: z.string().nullable().optional(),
});
export type PeftConfig = z.infer<typeof PeftConfig>;

const KEY = /^(?:base_model\.model\.)?model\.layers\.(\d+)\.(.+)\.lora_([AB])(?:\.default)?\.weight$/;

function transpose(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = data[i * cols + j]!;
  return out;
}

/** Reads a PEFT adapter from its two files' contents; errors name the file and key. */
export function readPeft(configJson: string, weights: Uint8Array, where = 'adapter'): Adapter {
  let cfgRaw: unknown;
  try {
    cfgRaw = JSON.parse(configJson);
  } catch (err) {
    throw new Error(`${where}/adapter_config.json: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const cfg = PeftConfig.safeParse(cfgRaw);
  if (!cfg.success) {
    const i = cfg.error.issues[0]!;
    throw new Error(`${where}/adapter_config.json: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  const c = cfg.data;
  if (c.use_dora) throw new Error(`${where}/adapter_config.json: DoRA adapters are not supported`);
  if (c.fan_in_fan_out)
    throw new Error(`${where}/adapter_config.json: fan_in_fan_out adapters (GPT-2 style) are not supported`);
  if (Object.keys(c.rank_pattern ?? {}).length || Object.keys(c.alpha_pattern ?? {}).length) {
    throw new Error(`${where}/adapter_config.json: per-module rank_pattern/alpha_pattern are not supported`);
  }
  // rsLoRA scales by α/√r; our scale is α/r, so carry α·√r.
  const alpha = c.use_rslora ? c.lora_alpha * Math.sqrt(c.r) : c.lora_alpha;
  const file = `${where}/adapter_model.safetensors`;
  const { tensors } = readSafetensors(weights, file);
  const halves = new Map<TargetKey, { A?: NamedTensor; B?: NamedTensor }>();
  for (const [name, t] of tensors) {
    const m = KEY.exec(name);
    const module = m ? MODULE_OF[m[2]!] : undefined;
    if (!m || !module)
      throw new Error(
        `${file}: key "${name}" is not a LoRA weight of a known decoder module (${Object.values(HF_MODULES).join(', ')})`,
      );
    const key = targetKey(Number(m[1]), module);
    const h = halves.get(key) ?? {};
    h[m[3] as 'A' | 'B'] = t;
    halves.set(key, h);
  }
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, { A, B }] of halves) {
    if (!A || !B) throw new Error(`${file}: ${key} has lora_${A ? 'B' : 'A'} missing`);
    const [rA, dIn] = A.shape as [number, number];
    const [dOut, rB] = B.shape as [number, number];
    if (A.shape.length !== 2 || B.shape.length !== 2) throw new Error(`${file}: ${key}: lora_A and lora_B must be 2-D`);
    if (rA !== c.r || rB !== c.r)
      throw new Error(`${file}: ${key}: rank ${rA}/${rB} in the tensors, r = ${c.r} in adapter_config.json`);
    targets.set(key, { dIn, dOut, A: transpose(A.data, rA, dIn), B: transpose(B.data, dOut, rB) });
  }
  if (targets.size === 0) throw new Error(`${file}: no LoRA tensors`);
  return { rank: c.r, alpha, targets };
}

/** The two files of a PEFT directory for this adapter (key names of the HF Llama family). */
export function writePeft(
  adapter: Adapter,
  opts: { baseModel: string | null },
): { config: string; weights: Uint8Array } {
  const tensors = new Map<string, NamedTensor>();
  const modules = new Set<string>();
  const layers = new Set<number>();
  for (const [key, p] of adapter.targets) {
    const dot = key.indexOf('.');
    const layer = Number(key.slice(0, dot));
    const module = key.slice(dot + 1);
    const path = HF_MODULES[module];
    if (!path) throw new Error(`adapter target ${key}: module "${module}" has no Hugging Face name`);
    modules.add(path.split('.').at(-1)!);
    layers.add(layer);
    const base = `base_model.model.model.layers.${layer}.${path}`;
    tensors.set(`${base}.lora_A.weight`, { shape: [adapter.rank, p.dIn], data: transpose(p.A, p.dIn, adapter.rank) });
    tensors.set(`${base}.lora_B.weight`, { shape: [p.dOut, adapter.rank], data: transpose(p.B, adapter.rank, p.dOut) });
  }
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: opts.baseModel,
    r: adapter.rank,
    lora_alpha: adapter.alpha,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: false,
    target_modules: [...modules].sort(),
    layers_to_transform: [...layers].sort((a, b) => a - b),
  };
  return { config: JSON.stringify(config, null, 2) + '\n', weights: writeSafetensors(tensors, { format: 'pt' }) };
}
