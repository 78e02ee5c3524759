// A GGUF file's header read in Node (no Python, no weights): the metadata and tensor table that the
// Models page shows for a file before it is imported, and the checks that refuse a file at once with
// the key or tensor named (docs/bundle-format.md, the paragraph on GGUF files). The layout is ggml's
// docs/gguf.md: magic, version, tensor count, key/value count, the key/values, the tensor table, then
// the tensor data at `general.alignment`. Reads only the header, a window at a time, so a 40 GB file
// costs a few megabytes.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { StudioError } from '../../common/errors';

/** Architectures the importer builds (pskills_train.export.from_gguf ARCHITECTURES; Mistral is llama). */
export const GGUF_ARCHITECTURES = ['llama', 'qwen2'] as const;

/** ggml tensor types: id → [name, block elements, block bytes]. */
const GGML_TYPES: Record<number, [string, number, number]> = {
  0: ['F32', 1, 4],
  1: ['F16', 1, 2],
  2: ['Q4_0', 32, 18],
  3: ['Q4_1', 32, 20],
  6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24],
  8: ['Q8_0', 32, 34],
  9: ['Q8_1', 32, 36],
  10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110],
  12: ['Q4_K', 256, 144],
  13: ['Q5_K', 256, 176],
  14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292],
  16: ['IQ2_XXS', 256, 66],
  17: ['IQ2_XS', 256, 74],
  18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50],
  20: ['IQ4_NL', 32, 18],
  21: ['IQ3_S', 256, 110],
  22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136],
  24: ['I8', 1, 1],
  25: ['I16', 1, 2],
  26: ['I32', 1, 4],
  27: ['I64', 1, 8],
  28: ['F64', 1, 8],
  29: ['IQ1_M', 256, 56],
  30: ['BF16', 1, 2],
  34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66],
  39: ['MXFP4', 32, 17],
};

/** Types the importer dequantizes (from_gguf SUPPORTED_TYPES, checked against the gguf package in pytest). */
export const GGUF_SUPPORTED_TYPES = [
  'F32',
  'F16',
  'BF16',
  'Q4_0',
  'Q4_1',
  'Q5_0',
  'Q5_1',
  'Q8_0',
  'Q2_K',
  'Q3_K',
  'Q4_K',
  'Q5_K',
  'Q6_K',
];

/** llama.cpp's llama_ftype: the file's overall quantization as its tools name it. */
const FILE_TYPES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
};

/** general.file_type's name (llama_ftype: 15 → Q4_K_M), null when unknown. */
export const fileTypeName = (ftype: unknown): string | null =>
  typeof ftype === 'number' ? (FILE_TYPES[ftype] ?? null) : null;

/** What the header says, for the Models page and the checks before an import. */
export interface GgufSummary {
  path: string;
  bytes: number;
  version: number;
  /** general.architecture */
  architecture: string;
  /** general.name, else the file's name */
  name: string;
  /** llama, qwen2 or mistral (a llama file whose name says Mistral), as the importer decides */
  family: string;
  /** Elements of every tensor. */
  parameters: number;
  /** general.file_type's name (Q4_K_M), else the most common tensor type. */
  quantization: string;
  tensorTypes: Record<string, number>;
  /** {arch}.context_length */
  context: number | null;
  layers: number | null;
  hidden: number | null;
  chatTemplate: string | null;
  tensors: number;
}

const HEADER_WINDOW = 1 << 20;

class Cursor {
  private buf = Buffer.alloc(0);
  private start = 0;
  pos = 0;
  /** What is being read, for the message when the file ends. */
  reading = 'the header';

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly file: string,
  ) {}

  private need(n: number): number {
    if (this.pos + n > this.size)
      throw new StudioError(
        'invalid_input',
        `${this.file}: truncated at byte ${this.size.toLocaleString('en-US')}, in ${this.reading}`,
      );
    const off = this.pos - this.start;
    if (off < 0 || off + n > this.buf.length) {
      this.buf = Buffer.alloc(Math.max(n, HEADER_WINDOW));
      const got = readSync(this.fd, this.buf, 0, Math.min(this.buf.length, this.size - this.pos), this.pos);
      this.buf = this.buf.subarray(0, got);
      this.start = this.pos;
    }
    const at = this.pos - this.start;
    this.pos += n;
    return at;
  }

  /** Reads n bytes through `f` once they are in the window (the window may move first). */
  private read<T>(n: number, f: (b: Buffer, at: number) => T): T {
    const at = this.need(n);
    return f(this.buf, at);
  }

  u32(): number {
    return this.read(4, (b, o) => b.readUInt32LE(o));
  }
  u64(): number {
    const v = this.read(8, (b, o) => b.readBigUInt64LE(o));
    if (v > BigInt(Number.MAX_SAFE_INTEGER))
      throw new StudioError('invalid_input', `${this.file}: corrupt: a count of ${v} in ${this.reading}`);
    return Number(v);
  }
  str(): string {
    const n = this.u64();
    if (this.pos + n > this.size) this.need(n); // the truncation message, before allocating n bytes
    const at = this.need(n);
    return this.buf.toString('utf8', at, at + n);
  }
  skip(n: number): void {
    if (this.pos + n > this.size) this.need(n);
    this.pos += n;
  }

  value(type: number): unknown {
    switch (type) {
      case 0:
        return this.read(1, (b, o) => b.readUInt8(o));
      case 1:
        return this.read(1, (b, o) => b.readInt8(o));
      case 2:
        return this.read(2, (b, o) => b.readUInt16LE(o));
      case 3:
        return this.read(2, (b, o) => b.readInt16LE(o));
      case 4:
        return this.u32();
      case 5:
        return this.read(4, (b, o) => b.readInt32LE(o));
      case 6:
        return this.read(4, (b, o) => b.readFloatLE(o));
      case 7:
        return this.read(1, (b, o) => b.readUInt8(o)) !== 0;
      case 8:
        return this.str();
      case 10:
        return Number(this.read(8, (b, o) => b.readBigUInt64LE(o)));
      case 11:
        return Number(this.read(8, (b, o) => b.readBigInt64LE(o)));
      case 12:
        return this.read(8, (b, o) => b.readDoubleLE(o));
      case 9: {
        const elem = this.u32();
        const count = this.u64();
        // Long arrays (the vocabulary, merges, token types) are skipped: the page needs only their length.
        const fixed = FIXED_BYTES[elem];
        if (fixed !== undefined) {
          this.skip(fixed * count);
          return { array: elem, count };
        }
        if (elem === 8) {
          for (let i = 0; i < count; i++) this.skip(this.u64());
          return { array: elem, count };
        }
        throw new StudioError('invalid_input', `${this.file}: ${this.reading} is an array of unknown type ${elem}`);
      }
      default:
        throw new StudioError('invalid_input', `${this.file}: ${this.reading} has unknown value type ${type}`);
    }
  }
}

const FIXED_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/**
 * The header of `path`, checked as the importer will check it: GGUF magic and version 2 or 3, a
 * supported architecture, every tensor of a supported type and inside the file. Throws
 * invalid_input naming the key or tensor.
 */
export function readGgufHeader(path: string, opts: { check?: boolean } = {}): GgufSummary {
  const check = opts.check ?? true;
  const file = basename(path);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new StudioError('not_found', `${path}: ${(err as NodeJS.ErrnoException).code ?? 'cannot open'}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new StudioError('invalid_input', `${path}: not a file`);
    const c = new Cursor(fd, st.size, file);
    if (st.size < 24) throw new StudioError('invalid_input', `${file}: ${st.size} bytes, too short for a GGUF header`);
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    if (magic.toString('latin1') !== 'GGUF')
      throw new StudioError('invalid_input', `${file}: not a GGUF file (no GGUF magic)`);
    c.pos = 4;
    const version = c.u32();
    if (version !== 2 && version !== 3)
      throw new StudioError('invalid_input', `${file}: GGUF version ${version} is not supported (2 and 3 are)`);
    const nTensors = c.u64();
    const nKv = c.u64();
    const kv = new Map<string, unknown>();
    for (let i = 0; i < nKv; i++) {
      c.reading =
        i === 0 ? 'the first metadata key' : `the metadata key after ${JSON.stringify([...kv.keys()].at(-1))}`;
      const key = c.str();
      c.reading = `metadata key ${JSON.stringify(key)}`;
      kv.set(key, c.value(c.u32()));
    }
    const arch = kv.get('general.architecture');
    if (typeof arch !== 'string')
      throw new StudioError('invalid_input', `${file}: metadata key 'general.architecture' missing`);
    if (check && !(GGUF_ARCHITECTURES as readonly string[]).includes(arch))
      throw new StudioError(
        'invalid_input',
        `${file}: general.architecture '${arch}' is not supported (supported: ${GGUF_ARCHITECTURES.join(', ')}; Mistral files are 'llama')`,
      );
    const tensors: { name: string; type: number; elements: number; offset: number }[] = [];
    for (let i = 0; i < nTensors; i++) {
      c.reading = `the tensor table entry ${i + 1} of ${nTensors}`;
      const name = c.str();
      c.reading = `the tensor table entry '${name}'`;
      const dims = c.u32();
      let elements = 1;
      for (let d = 0; d < dims; d++) elements *= c.u64();
      tensors.push({ name, type: c.u32(), elements, offset: c.u64() });
    }
    const alignment = typeof kv.get('general.alignment') === 'number' ? (kv.get('general.alignment') as number) : 32;
    const dataStart = Math.ceil(c.pos / alignment) * alignment;
    const types: Record<string, number> = {};
    let parameters = 0;
    for (const t of tensors) {
      const known = GGML_TYPES[t.type];
      const typeName = known?.[0] ?? `type ${t.type}`;
      types[typeName] = (types[typeName] ?? 0) + 1;
      if (t.name !== 'rope_freqs.weight') parameters += t.elements;
      if (!check) continue;
      if (!known || !GGUF_SUPPORTED_TYPES.includes(typeName))
        throw new StudioError(
          'invalid_input',
          `${file}: tensor '${t.name}' has quantization type ${typeName}, which is not supported (supported: ${GGUF_SUPPORTED_TYPES.join(', ')})`,
        );
      const end = dataStart + t.offset + (t.elements / known[1]) * known[2];
      if (end > st.size)
        throw new StudioError(
          'invalid_input',
          `${file}: truncated: tensor '${t.name}' ends at byte ${end.toLocaleString('en-US')}, the file has ${st.size.toLocaleString('en-US')} bytes`,
        );
    }
    const num = (k: string) => (typeof kv.get(k) === 'number' ? (kv.get(k) as number) : null);
    const name = typeof kv.get('general.name') === 'string' ? (kv.get('general.name') as string) : file;
    const ftype = num('general.file_type');
    const common = Object.entries(types).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
    const template = kv.get('tokenizer.chat_template');
    return {
      path,
      bytes: st.size,
      version,
      architecture: arch,
      name,
      family: arch === 'qwen2' ? 'qwen2' : /mistral/i.test(name) ? 'mistral' : arch,
      parameters,
      quantization: ftype !== null && FILE_TYPES[ftype] ? FILE_TYPES[ftype] : common,
      tensorTypes: types,
      context: num(`${arch}.context_length`),
      layers: num(`${arch}.block_count`),
      hidden: num(`${arch}.embedding_length`),
      chatTemplate: typeof template === 'string' ? template : null,
      tensors: tensors.length,
    };
  } finally {
    closeSync(fd);
  }
}

/** A chat template's format by its markers ("ChatML", "Llama 3", …), for a card; "custom" otherwise. */
export function chatTemplateKind(template: string | null): string {
  if (template === null) return 'none';
  if (template.includes('<|im_start|>')) return 'ChatML';
  if (template.includes('<|start_header_id|>')) return 'Llama 3';
  if (template.includes('[INST]')) return 'Mistral / Llama 2 [INST]';
  if (template.includes('<start_of_turn>')) return 'Gemma';
  if (template.includes('<|user|>')) return 'Zephyr / Phi';
  return 'custom';
}
