// Reads llama.cpp's LoRA GGUF (the format gguf-lora-write.ts writes; docs/guide.md "Back to llama.cpp,
// Ollama and LM Studio") back into our Adapter. The file comes through the read gate (main/files/read-gate.ts: a regular file, its
// size under the limit, checked before it is opened); every length and offset in it is bounds-checked,
// and errors name the file and the key or tensor. Only F32 and F16 tensors are read.
import { readGated } from '../files/read-gate';
import { targetKey, type Adapter, type LoraPair, type TargetKey } from './types';
import { hfRowOf, MODULE_OF_GGUF, permutedHeads, type GgufBase } from './gguf-lora-names';
import { EXACT_ALPHA_KEY, GGML_F16, GGML_F32, GGUF_ALIGNMENT, GGUF_MAGIC } from './gguf-lora-write';
import { fromHalfBits } from './half';

export class GgufLoraError extends Error {}

export interface GgufTensorIn {
  name: string;
  dims: number[];
  type: number;
  data: Float32Array;
}

export interface GgufLoraFile {
  arch: string;
  /** adapter.lora.alpha (our exact float64 copy when it agrees); null when absent or 0 */
  alpha: number | null;
  name: string | null;
  /** every scalar and string metadata value, by key */
  meta: Map<string, string | number | boolean | bigint>;
  tensors: GgufTensorIn[];
}

const SCALAR_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const TYPE_NAME: Record<number, string> = { 0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 6: 'Q5_0', 7: 'Q5_1', 8: 'Q8_0' };

class Cursor {
  at = 0;
  constructor(
    private readonly b: Buffer,
    private readonly where: string,
  ) {}
  need(n: number, what: string): void {
    if (this.at + n > this.b.length)
      throw new GgufLoraError(
        `${this.where}: truncated: ${what} ends at byte ${this.at + n}, the file has ${this.b.length}`,
      );
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.b.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  u64(what: string): number {
    this.need(8, what);
    const v = this.b.readBigUInt64LE(this.at);
    this.at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufLoraError(`${this.where}: ${what}: ${v} is too large`);
    return Number(v);
  }
  str(what: string): string {
    const n = this.u64(`${what} (length)`);
    this.need(n, what);
    const s = this.b.toString('utf8', this.at, this.at + n);
    this.at += n;
    return s;
  }
  scalar(type: number, what: string): string | number | boolean | bigint {
    const size = SCALAR_SIZE[type];
    if (size === undefined) throw new GgufLoraError(`${this.where}: ${what}: unknown value type ${type}`);
    this.need(size, what);
    const b = this.b;
    const at = this.at;
    this.at += size;
    switch (type) {
      case 0:
        return b.readUInt8(at);
      case 1:
        return b.readInt8(at);
      case 2:
        return b.readUInt16LE(at);
      case 3:
        return b.readInt16LE(at);
      case 4:
        return b.readUInt32LE(at);
      case 5:
        return b.readInt32LE(at);
      case 6:
        return b.readFloatLE(at);
      case 7:
        return b.readUInt8(at) !== 0;
      case 10:
        return b.readBigUInt64LE(at);
      case 11:
        return b.readBigInt64LE(at);
      default:
        return b.readDoubleLE(at);
    }
  }
}

/** Parses the GGUF and checks that it is a LoRA adapter; `where` names the file in errors. */
export function decodeGgufLora(bytes: Buffer, where: string): GgufLoraFile {
  const c = new Cursor(bytes, where);
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== GGUF_MAGIC)
    throw new GgufLoraError(`${where}: not a GGUF file (it does not start with "GGUF")`);
  c.at = 4;
  const version = c.u32('version');
  if (version !== 2 && version !== 3)
    throw new GgufLoraError(`${where}: GGUF version ${version}; versions 2 and 3 are read`);
  const nTensors = c.u64('tensor count');
  const nKv = c.u64('metadata count');
  // Each entry takes at least 8 bytes: counts beyond the file are a corrupt header, not an allocation.
  if (nTensors > bytes.length / 8 || nKv > bytes.length / 8)
    throw new GgufLoraError(`${where}: header claims ${nTensors} tensors and ${nKv} metadata keys; corrupt`);
  const meta = new Map<string, string | number | boolean | bigint>();
  for (let i = 0; i < nKv; i++) {
    const key = c.str(`metadata key ${i}`);
    const type = c.u32(`type of ${key}`);
    if (type === 8) meta.set(key, c.str(key));
    else if (type === 9) {
      const inner = c.u32(`${key} (array type)`);
      const n = c.u64(`${key} (array length)`);
      if (inner === 8) for (let j = 0; j < n; j++) c.str(`${key}[${j}]`);
      else {
        const size = SCALAR_SIZE[inner];
        if (size === undefined) throw new GgufLoraError(`${where}: ${key}: arrays of type ${inner} are not read`);
        c.need(n * size, key);
        c.at += n * size;
      }
    } else meta.set(key, c.scalar(type, key));
  }
  const kind = meta.get('general.type');
  const adapterType = meta.get('adapter.type');
  if (kind !== 'adapter' || adapterType !== 'lora')
    throw new GgufLoraError(
      `${where}: not a LoRA adapter (general.type ${JSON.stringify(kind ?? null)}, adapter.type ` +
        `${JSON.stringify(adapterType ?? null)}; a llama.cpp LoRA has "adapter" and "lora"): a model file is imported on the Models page`,
    );
  const arch = meta.get('general.architecture');
  if (typeof arch !== 'string') throw new GgufLoraError(`${where}: general.architecture missing`);
  const alignment = meta.get('general.alignment') ?? GGUF_ALIGNMENT;
  if (typeof alignment !== 'number' || alignment < 1 || alignment % 8 !== 0)
    throw new GgufLoraError(`${where}: general.alignment ${String(alignment)} is not a multiple of 8`);

  const infos: { name: string; dims: number[]; type: number; offset: number }[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.str(`tensor ${i} name`);
    const nd = c.u32(`tensor '${name}' dimensions`);
    if (nd < 1 || nd > 4) throw new GgufLoraError(`${where}: tensor '${name}' has ${nd} dimensions`);
    const dims = Array.from({ length: nd }, (_, d) => c.u64(`tensor '${name}' dim ${d}`));
    const type = c.u32(`tensor '${name}' type`);
    const offset = c.u64(`tensor '${name}' offset`);
    if (type !== GGML_F32 && type !== GGML_F16)
      throw new GgufLoraError(
        `${where}: tensor '${name}' is ${TYPE_NAME[type] ?? `ggml type ${type}`}; only F32 and F16 LoRA tensors are read (convert with --outtype f32 or f16)`,
      );
    infos.push({ name, dims, type, offset });
  }
  const dataStart = Math.ceil(c.at / alignment) * alignment;
  const tensors = infos.map(({ name, dims, type, offset }) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const size = n * (type === GGML_F32 ? 4 : 2);
    const start = dataStart + offset;
    if (offset % alignment !== 0) throw new GgufLoraError(`${where}: tensor '${name}' is not aligned`);
    if (start + size > bytes.length)
      throw new GgufLoraError(
        `${where}: truncated: tensor '${name}' ends at byte ${start + size}, the file has ${bytes.length}`,
      );
    const data = new Float32Array(n);
    if (type === GGML_F32) for (let i = 0; i < n; i++) data[i] = bytes.readFloatLE(start + 4 * i);
    else for (let i = 0; i < n; i++) data[i] = fromHalfBits(bytes.readUInt16LE(start + 2 * i));
    return { name, dims, type, data };
  });
  const a32 = meta.get('adapter.lora.alpha');
  const exact = meta.get(EXACT_ALPHA_KEY);
  let alpha = typeof a32 === 'number' && a32 !== 0 ? a32 : null;
  if (alpha !== null && typeof exact === 'number' && Math.fround(exact) === alpha) alpha = exact;
  const name = meta.get('general.name');
  return { arch, alpha, name: typeof name === 'string' ? name : null, meta, tensors };
}

const NAME = /^blk\.(\d+)\.([a-z_]+)\.weight\.lora_(a|b)$/;

/**
 * Our Adapter from a decoded LoRA GGUF for `base` (its architecture and heads), each target checked
 * against `dims` (module → d_in, d_out of the base the adapter goes into). Refusals name the tensor.
 */
export function ggufLoraToAdapter(
  f: GgufLoraFile,
  base: GgufBase,
  dims: ReadonlyMap<string, { dIn: number; dOut: number }>,
  where: string,
): Adapter {
  if (f.arch !== base.arch)
    throw new GgufLoraError(
      `${where}: a LoRA for a ${f.arch} model (general.architecture); the current bundle's base is ${base.arch}`,
    );
  const halves = new Map<TargetKey, { a?: GgufTensorIn; b?: GgufTensorIn; module: string }>();
  for (const t of f.tensors) {
    const m = NAME.exec(t.name);
    const module = m ? MODULE_OF_GGUF[m[2]!] : undefined;
    if (!m || !module)
      throw new GgufLoraError(
        `${where}: tensor '${t.name}' is not a LoRA factor of a projection the studio adapts (blk.N.{attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down}.weight.lora_a|lora_b)`,
      );
    const key = targetKey(Number(m[1]), module);
    const h = halves.get(key) ?? { module };
    h[m[3] as 'a' | 'b'] = t;
    halves.set(key, h);
  }
  let rank: number | null = null;
  const targets = new Map<TargetKey, LoraPair>();
  for (const [key, { a, b, module }] of halves) {
    if (!a || !b)
      throw new GgufLoraError(`${where}: ${(a ?? b)!.name.replace(/_[ab]$/, '')}: lora_${a ? 'b' : 'a'} missing`);
    const want = dims.get(module);
    if (!want)
      throw new GgufLoraError(
        `${where}: tensor '${a.name}': the current bundle has no LoRA inputs for module ${module}`,
      );
    if (a.dims.length !== 2 || b.dims.length !== 2)
      throw new GgufLoraError(`${where}: tensor '${a.name}': lora_a and lora_b must be 2-D`);
    const [dIn, r] = a.dims as [number, number];
    const [rB, dOut] = b.dims as [number, number];
    if (dIn !== want.dIn || dOut !== want.dOut)
      throw new GgufLoraError(
        `${where}: tensor '${a.name.replace(/\.lora_a$/, '')}': LoRA of shape [${dIn} → ${dOut}], the current ` +
          `bundle's ${module} projection is [${want.dIn} → ${want.dOut}]: an adapter for another base`,
      );
    if (rB !== r) throw new GgufLoraError(`${where}: tensor '${b.name}': rank ${rB}, its lora_a has ${r}`);
    if (rank !== null && r !== rank)
      throw new GgufLoraError(
        `${where}: tensor '${a.name}': rank ${r}, other tensors have ${rank} (one rank per adapter)`,
      );
    rank = r;
    const A = new Float32Array(dIn * r);
    for (let k = 0; k < r; k++) for (let i = 0; i < dIn; i++) A[i * r + k] = a.data[k * dIn + i]!;
    const heads = permutedHeads(base, module);
    if (heads && (dOut % heads !== 0 || (dOut / heads) % 2 !== 0))
      throw new GgufLoraError(`${where}: tensor '${b.name}': ${dOut} rows are not ${heads} heads of an even size`);
    const B = new Float32Array(r * dOut);
    for (let g = 0; g < dOut; g++) {
      const o = heads ? hfRowOf(g, dOut, heads) : g;
      for (let k = 0; k < r; k++) B[k * dOut + o] = b.data[g * r + k]!;
    }
    targets.set(key, { dIn, dOut, A, B });
  }
  if (rank === null) throw new GgufLoraError(`${where}: no LoRA tensors`);
  // llama.cpp: alpha absent or 0 means scale 1, i.e. α = r.
  return { rank, alpha: f.alpha ?? rank, targets };
}

/** The file through the read gate, then decoded. */
export async function readGgufLoraFile(path: string): Promise<GgufLoraFile> {
  const bytes = await readGated(path, 'GGUF LoRA adapter');
  return decodeGgufLora(bytes, path);
}
