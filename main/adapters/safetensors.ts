// safetensors read/write: u64 little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?}, then the raw tensor bytes.
// No maintained TypeScript implementation exists on npm, and the format is this small.
import { z } from 'zod';

export interface NamedTensor {
  shape: number[];
  data: Float32Array; // F16/BF16 are widened on read; we always write F32
}

const Entry = z.object({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
});

const MAX_HEADER = 100 * 1024 * 1024;

function widenHalf(bits: number): number {
  const s = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const f = bits & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

const DTYPE_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };

/** `bytes` holds exactly `count` values of `dtype` (checked by the caller before anything is allocated). */
function decode(dtype: string, bytes: Uint8Array, count: number): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    if (dtype === 'F32') out[i] = view.getFloat32(i * 4, true);
    else if (dtype === 'F64') out[i] = view.getFloat64(i * 8, true);
    else if (dtype === 'F16') out[i] = widenHalf(view.getUint16(i * 2, true));
    else out[i] = new Float32Array(new Uint32Array([view.getUint16(i * 2, true) << 16]).buffer)[0]!;
  }
  return out;
}

const kindOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;

/** `__metadata__` is a map of strings to strings (the format says so; we only read it). */
function readMetadata(raw: unknown, file: string): Record<string, string> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`${file}: __metadata__ is ${kindOf(raw)}, not a mapping of strings`);
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw new Error(`${file}: __metadata__ values must be strings; "${k}" is ${kindOf(v)}`);
  }
  return raw as Record<string, string>;
}

export function readSafetensors(
  buf: Uint8Array,
  file = 'safetensors',
): { tensors: Map<string, NamedTensor>; metadata: Record<string, string> } {
  if (buf.byteLength < 8) throw new Error(`${file}: too short to be a safetensors file`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const claimed = view.getBigUint64(0, true);
  // The cap first: a header over it is refused for that, whatever the file's size.
  if (claimed > BigInt(MAX_HEADER))
    throw new Error(
      `${file}: header length ${claimed.toLocaleString('en-US')} bytes is over the ${MAX_HEADER / (1024 * 1024)} MiB cap on a safetensors header; not read`,
    );
  const headerLen = Number(claimed);
  if (8 + headerLen > buf.byteLength)
    throw new Error(`${file}: header length ${headerLen} does not fit the file (${buf.byteLength} bytes)`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(8, 8 + headerLen))) as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw new Error(`${file}: header is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const body = buf.subarray(8 + headerLen);
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = readMetadata(raw, file);
      continue;
    }
    const e = Entry.safeParse(raw);
    if (!e.success) throw new Error(`${file}: tensor "${name}": bad header entry (${e.error.issues[0]?.message})`);
    const [begin, end] = e.data.data_offsets;
    if (end < begin || end > body.byteLength)
      throw new Error(
        `${file}: tensor "${name}": data_offsets [${begin}, ${end}] outside the data (${body.byteLength} bytes)`,
      );
    const { dtype, shape } = e.data;
    const size = DTYPE_BYTES[dtype];
    if (!size) throw new Error(`${file}: tensor "${name}" has dtype ${dtype}; only F32, F16, BF16 and F64 are read`);
    // Compared before allocating: a header may claim any shape ([2^31, 2^31] is 2^64 bytes).
    const count = shape.reduce((a, b) => a * b, 1);
    if (count * size !== end - begin) {
      const need = Number.isSafeInteger(count * size) ? (count * size).toLocaleString('en-US') : 'over 2^53';
      throw new Error(
        `${file}: tensor "${name}": shape [${shape.join(', ')}] ${dtype} needs ${need} bytes, data_offsets [${begin}, ${end}] hold ${end - begin}: the sizes do not match`,
      );
    }
    tensors.set(name, { shape, data: decode(dtype, body.subarray(begin, end), count) });
  }
  return { tensors, metadata };
}

/** Writes F32 tensors in name order (stable bytes for the same input). */
export function writeSafetensors(
  tensors: ReadonlyMap<string, NamedTensor>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const t = tensors.get(name)!;
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`tensor "${name}": shape [${t.shape}] needs ${count} values, has ${t.data.length}`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + count * 4] };
    offset += count * 4;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8); // keep tensor data 8-byte aligned
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.byteLength), true);
  out.set(head, 8);
  let at = 8 + head.byteLength;
  for (const name of names) {
    const d = tensors.get(name)!.data;
    const le = new DataView(out.buffer, at, d.length * 4);
    for (let i = 0; i < d.length; i++) le.setFloat32(i * 4, d[i]!, true);
    at += d.length * 4;
  }
  return out;
}
