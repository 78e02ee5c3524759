// Writes an adapter as llama.cpp's LoRA GGUF (docs/guide.md "Back to llama.cpp, Ollama and LM Studio"):
// our own writer of the format llama.cpp's convert_lora_to_gguf.py produces and llama-adapter.cpp loads:
//   GGUF v3, little-endian; metadata general.architecture (the base's), general.type = "adapter",
//   adapter.type = "lora", adapter.lora.alpha (float32); per target two tensors
//   blk.N.<module>.weight.lora_a with ggml dims [d_in, r] (r rows of d_in, PEFT's lora_A) and
//   blk.N.<module>.weight.lora_b with dims [r, d_out] (d_out rows of r, PEFT's lora_B), F32 or F16;
//   every tensor's data aligned to 32 bytes (GGUF's default general.alignment).
// llama.cpp applies scale·(alpha/r)·B·A, as we do with (α/r)·A·B in our transposed layout.
import { parseTargetKey, type Adapter } from './types';
import { GGUF_MODULES, hfRowOf, MODULE_ORDER, permutedHeads, type GgufBase } from './gguf-lora-names';
import { toHalfBits } from './half';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;
export const GGML_F32 = 0;
export const GGML_F16 = 1;
/** GGUF metadata value types used here. */
export const GGUF_T = { UINT32: 4, FLOAT32: 6, STRING: 8, FLOAT64: 12 } as const;
/** Our exact alpha (float64): adapter.lora.alpha is float32, so the round trip reads this one. */
export const EXACT_ALPHA_KEY = 'pskills.adapter.alpha';

export type GgufDtype = 'f32' | 'f16';

export interface GgufTensorOut {
  name: string;
  /** ggml order: ne[0] (the contiguous one) first */
  dims: [number, number];
  /** row-major values, ne[1] rows of ne[0] */
  data: Float32Array;
}

export class GgufExportError extends Error {}

type Meta = [key: string, type: number, value: string | number];

/** The tensors llama.cpp wants for this adapter, in our order (layer, then q k v o gate up down). */
export function loraTensors(adapter: Adapter, base: GgufBase): GgufTensorOut[] {
  const r = adapter.rank;
  if (!Number.isInteger(r) || r < 1) throw new GgufExportError(`rank ${r}: a GGUF LoRA needs a rank of at least 1`);
  const keys = [...adapter.targets.keys()].map((key) => ({ key, ...parseTargetKey(key) }));
  for (const { key, module, layer } of keys) {
    if (!GGUF_MODULES[module])
      throw new GgufExportError(
        `target ${key}: module "${module}" has no llama.cpp tensor (GGUF LoRA holds ${MODULE_ORDER.join(', ')})`,
      );
    if (!Number.isInteger(layer) || layer < 0) throw new GgufExportError(`target ${key}: no layer number`);
  }
  keys.sort((a, b) => a.layer - b.layer || MODULE_ORDER.indexOf(a.module) - MODULE_ORDER.indexOf(b.module));
  const out: GgufTensorOut[] = [];
  for (const { key, layer, module } of keys) {
    const p = adapter.targets.get(key)!;
    if (p.A.length !== p.dIn * r || p.B.length !== r * p.dOut)
      throw new GgufExportError(`target ${key}: factors do not match d_in ${p.dIn}, d_out ${p.dOut}, rank ${r}`);
    const name = `blk.${layer}.${GGUF_MODULES[module]}.weight`;
    const a = new Float32Array(r * p.dIn); // [r][d_in]
    for (let i = 0; i < p.dIn; i++) for (let k = 0; k < r; k++) a[k * p.dIn + i] = p.A[i * r + k]!;
    const heads = permutedHeads(base, module);
    if (heads && (p.dOut % heads !== 0 || (p.dOut / heads) % 2 !== 0))
      throw new GgufExportError(`target ${key}: d_out ${p.dOut} is not ${heads} heads of an even size`);
    const b = new Float32Array(p.dOut * r); // [d_out][r], Llama's q/k rows in llama.cpp's order
    for (let g = 0; g < p.dOut; g++) {
      const o = heads ? hfRowOf(g, p.dOut, heads) : g;
      for (let k = 0; k < r; k++) b[g * r + k] = p.B[k * p.dOut + o]!;
    }
    out.push({ name: `${name}.lora_a`, dims: [p.dIn, r], data: a });
    out.push({ name: `${name}.lora_b`, dims: [r, p.dOut], data: b });
  }
  if (out.length === 0) throw new GgufExportError('the adapter has no targets');
  return out;
}

class Bytes {
  private buf = Buffer.alloc(1 << 16);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  u64(v: number): void {
    this.room(8);
    this.buf.writeBigUInt64LE(BigInt(v), this.length);
    this.length += 8;
  }
  f32(v: number): void {
    this.room(4);
    this.buf.writeFloatLE(v, this.length);
    this.length += 4;
  }
  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.length);
    this.length += 8;
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.raw(b);
  }
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  pad(to: number): void {
    const n = (to - (this.length % to)) % to;
    this.room(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.length);
  }
}

function tensorBytes(t: GgufTensorOut, dtype: GgufDtype): Uint8Array {
  for (let i = 0; i < t.data.length; i++) {
    const v = t.data[i]!;
    if (!Number.isFinite(v)) throw new GgufExportError(`tensor ${t.name}: value ${v} at ${i} is not finite`);
    if (dtype === 'f16' && Math.abs(v) > 65504)
      throw new GgufExportError(`tensor ${t.name}: value ${v} at ${i} is outside float16's range (export as f32)`);
  }
  if (dtype === 'f32') {
    const copy = new Float32Array(t.data); // little-endian on every platform Node runs on that we ship
    return new Uint8Array(copy.buffer);
  }
  const h = new Uint16Array(t.data.length);
  for (let i = 0; i < h.length; i++) h[i] = toHalfBits(t.data[i]!);
  return new Uint8Array(h.buffer);
}

/** The whole GGUF file for this adapter on this base. `strings`: extra string metadata (provenance). */
export function encodeGgufLora(
  adapter: Adapter,
  base: GgufBase,
  opts: { dtype?: GgufDtype; name?: string; strings?: Record<string, string> } = {},
): Uint8Array {
  const dtype = opts.dtype ?? 'f32';
  if (!Number.isFinite(adapter.alpha) || adapter.alpha === 0)
    throw new GgufExportError(
      `alpha ${adapter.alpha}: llama.cpp reads adapter.lora.alpha 0 as "no alpha" (scale 1), so an adapter ` +
        `whose α is 0 or not finite cannot be written`,
    );
  if (!Number.isFinite(Math.fround(adapter.alpha)))
    throw new GgufExportError(`alpha ${adapter.alpha} does not fit adapter.lora.alpha (float32)`);
  const tensors = loraTensors(adapter, base);
  const meta: Meta[] = [
    ['general.architecture', GGUF_T.STRING, base.arch],
    ['general.type', GGUF_T.STRING, 'adapter'],
    ['adapter.type', GGUF_T.STRING, 'lora'],
    ['adapter.lora.alpha', GGUF_T.FLOAT32, adapter.alpha],
    [EXACT_ALPHA_KEY, GGUF_T.FLOAT64, adapter.alpha],
    ['general.file_type', GGUF_T.UINT32, dtype === 'f32' ? 0 : 1], // llama_ftype ALL_F32 / MOSTLY_F16
  ];
  if (opts.name) meta.push(['general.name', GGUF_T.STRING, opts.name]);
  for (const [k, v] of Object.entries(opts.strings ?? {})) meta.push([k, GGUF_T.STRING, v]);

  const datas = tensors.map((t) => tensorBytes(t, dtype));
  const w = new Bytes();
  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, type, value] of meta) {
    w.str(key);
    w.u32(type);
    if (type === GGUF_T.STRING) w.str(value as string);
    else if (type === GGUF_T.FLOAT32) w.f32(value as number);
    else if (type === GGUF_T.FLOAT64) w.f64(value as number);
    else w.u32(value as number);
  }
  let offset = 0;
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(2);
    w.u64(t.dims[0]);
    w.u64(t.dims[1]);
    w.u32(dtype === 'f32' ? GGML_F32 : GGML_F16);
    w.u64(offset);
    offset += datas[i]!.length;
    offset += (GGUF_ALIGNMENT - (offset % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
  });
  w.pad(GGUF_ALIGNMENT);
  for (const d of datas) {
    w.raw(d);
    w.pad(GGUF_ALIGNMENT);
  }
  return w.bytes();
}
