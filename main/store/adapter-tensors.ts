// How the store keeps an adapter's tensors: one safetensors file in the engine's layout
// (`lora.{layer}.{module}.A` [d_in, r], `.B` [r, d_out], F32, names sorted) with rank and α in the
// metadata, so equal adapters are equal bytes and the bytes' sha256 identifies them.
import { createHash } from 'node:crypto';
import { readSafetensors, writeSafetensors, type NamedTensor } from '../adapters/safetensors';
import { parseTargetKey, targetKey, type Adapter, type LoraPair, type TargetKey } from '../adapters/types';
import { validateAdapter } from '../adapters/validate';

export const TENSORS_FORMAT = 'pskills.adapter/1';

const NAME = /^lora\.(\d+)\.(.+)\.([AB])$/;

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function encodeAdapter(adapter: Adapter): Uint8Array {
  validateAdapter(adapter);
  const tensors = new Map<string, NamedTensor>();
  for (const [key, p] of adapter.targets) {
    const { layer, module } = parseTargetKey(key);
    tensors.set(`lora.${layer}.${module}.A`, { shape: [p.dIn, adapter.rank], data: p.A });
    tensors.set(`lora.${layer}.${module}.B`, { shape: [adapter.rank, p.dOut], data: p.B });
  }
  return writeSafetensors(tensors, {
    format: TENSORS_FORMAT,
    rank: String(adapter.rank),
    alpha: String(adapter.alpha),
  });
}

export function decodeAdapter(bytes: Uint8Array, where: string): Adapter {
  const { tensors, metadata } = readSafetensors(bytes, where);
  if (metadata.format !== TENSORS_FORMAT)
    throw new Error(`${where}: format "${metadata.format}", expected ${TENSORS_FORMAT}`);
  const rank = Number(metadata.rank);
  const alpha = Number(metadata.alpha);
  const halves = new Map<TargetKey, { A?: NamedTensor; B?: NamedTensor }>();
  for (const [name, t] of tensors) {
    const m = NAME.exec(name);
    if (!m) throw new Error(`${where}: unexpected tensor "${name}"`);
    const key = targetKey(Number(m[1]), m[2]!);
    halves.set(key, { ...halves.get(key), [m[3]!]: t });
  }
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, { A, B }] of halves) {
    if (!A || !B) throw new Error(`${where}: ${key} lacks its ${A ? 'B' : 'A'} tensor`);
    targets.set(key, { dIn: A.shape[0]!, dOut: B.shape[1]!, A: A.data, B: B.data });
  }
  const adapter = { rank, alpha, targets };
  validateAdapter(adapter);
  return adapter;
}
