// A GGUF file's header read in Node (no Python, no weights): the metadata and tensor table that the
// Models page shows for a file before it is imported, and the checks that refuse a file at once with
// the key or tensor named (docs/bundle-format.md, the paragraph on GGUF files). The layout is ggml's
// docs/gguf.md: magic, version, tensor count, key/value count, the key/values, the tensor table, then
// the tensor data at `general.alignment`. The file passes the read gate first (a regular file, never
// a FIFO or device), then every count and length the header claims is held to GGUF_LIMITS before
// anything is read or allocated: the reader keeps one 1 MiB window, skips the strings and arrays the
// page does not need without materialising them, and gives up after a time budget
// (docs/security.md "GGUF files").
import { closeSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { StudioError } from '../../common/errors';
import { byteText, GateError, openGatedSync } from '../files/read-gate';
import { GGUF_LIMITS as L, GGUF_REFUSALS as W } from './gguf-limits';

/** Architectures the importer builds (pskills_train.export.from_gguf ARCHITECTURES; Mistral is llama). */
export const GGUF_ARCHITECTURES = ['llama', 'qwen2'] as const;

/** What else the importer needs of a header, as its gate checks it (gguf_gate.py check_importable): a block
 *  count of 1 to 1,024, the metadata it reads whatever the file (REQUIRED_KEYS: `{arch}` is
 *  general.architecture) with a value type it can use, and only the tensors of such a model. A file that
 *  lacked one of these keys started the importer, which loaded torch (3.5 s, 330 MB) before naming it. */
export const GGUF_IMPORTER = {
  maxLayers: 1024,
  requiredKeys: [
    ['{arch}.embedding_length', 'integer'],
    ['{arch}.attention.head_count', 'integer'],
    ['{arch}.feed_forward_length', 'integer'],
    ['{arch}.attention.layer_norm_rms_epsilon', 'float'],
    ['tokenizer.ggml.model', 'string'],
    ['tokenizer.ggml.tokens', 'array of strings'],
    ['tokenizer.ggml.eos_token_id', 'integer'],
  ],
  globalTensors: ['token_embd.weight', 'output_norm.weight', 'output.weight', 'rope_freqs.weight'],
  layerTensors: [
    'attn_norm.weight',
    'ffn_norm.weight',
    'attn_q.weight',
    'attn_k.weight',
    'attn_v.weight',
    'attn_output.weight',
    'attn_q.bias',
    'attn_k.bias',
    'attn_v.bias',
    'attn_output.bias',
    'ffn_gate.weight',
    'ffn_up.weight',
    'ffn_down.weight',
  ],
} as const;
/** The most tensors such a model has: the global ones and every layer's. */
const IMPORT_MAX_TENSORS =
  GGUF_IMPORTER.globalTensors.length + GGUF_IMPORTER.layerTensors.length * GGUF_IMPORTER.maxLayers;
const LAYER_TENSOR = new Set<string>(GGUF_IMPORTER.layerTensors);
const GLOBAL_TENSOR = new Set<string>(GGUF_IMPORTER.globalTensors);

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

const WINDOW = 1 << 20;
/** Bytes of a key or tensor name decoded: real ones are at most 64 (GGML_MAX_NAME). */
const NAME_SHOWN = 256;
/** Metadata string values kept (the rest are skipped): what the summary shows. */
const WANTED = new Set([
  'general.architecture',
  'general.name',
  'tokenizer.chat_template',
  ...GGUF_ARCHITECTURES.map((a) => `${a}.rope.scaling.type`),
]);
/** Smallest bytes of an element of each value type (a string: its u64 length; an array: type + count). */
const MIN_BYTES: Record<number, number> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  8: 8,
  9: 12,
  10: 8,
  11: 8,
  12: 8,
};
const INTEGER_TYPES = new Set([0, 1, 2, 3, 4, 5, 10, 11]);
const PREAMBLE = 24;
const n = (v: bigint | number) => v.toLocaleString('en-US');

type Value =
  | number
  | bigint
  | boolean
  | string
  | { skipped: 'string'; bytes: bigint }
  | { skipped: 'array'; bytes: bigint; elem: number };

class Cursor {
  private readonly buf = Buffer.allocUnsafe(WINDOW);
  private start = 0;
  private len = 0;
  pos = 0;
  /** What is being read, for the message when the file ends. */
  reading = 'the header';
  /** Set once the key/values start: they count against maxMetadataBytes. */
  metaFrom: number | null = null;
  private ticks = 0;
  private readonly deadline: number;

  constructor(
    private readonly fd: number,
    readonly size: number,
    private readonly path: string,
    private readonly budgetMs: number,
  ) {
    this.deadline = Date.now() + budgetMs;
  }

  refuse(reason: string): GateError {
    return new GateError(this.path, reason);
  }

  /** Every so often: past the time budget, the file is refused. */
  tick(): void {
    if ((++this.ticks & 0xfff) === 0) this.checkTime();
  }

  /** Also at every window read: 4,096 values of 64 KiB each are 256 MiB. */
  private checkTime(): void {
    if (Date.now() > this.deadline)
      throw this.refuse(`over the ${n(this.budgetMs)} ms ${W.budget} for a GGUF header, in ${this.reading}; skipped`);
  }

  /** `bytes` (≤ 64 MiB, checked by the caller) more may be read here: within the metadata cap and the
   *  file. Plain numbers: this runs once per value, 10⁶ times for a vocabulary. */
  private room(bytes: number): void {
    if (this.metaFrom !== null && this.pos - this.metaFrom + bytes > L.maxMetadataBytes)
      throw this.refuse(
        `over the ${byteText(L.maxMetadataBytes)} cap on ${W.metadataBytes} (at ${this.reading}); not read`,
      );
    if (this.pos + bytes > this.size) throw this.refuse(`${W.truncated} at byte ${n(this.size)}, in ${this.reading}`);
  }

  /** The window offset of `k` ≤ 8 bytes at pos, read in when needed. */
  private at(k: number): number {
    this.room(k);
    if (this.pos < this.start || this.pos + k > this.start + this.len) {
      this.checkTime();
      this.start = this.pos;
      this.len = readSync(this.fd, this.buf, 0, Math.min(WINDOW, this.size - this.pos), this.pos);
      if (this.len < k) throw this.refuse(`${W.truncated} at byte ${n(this.pos + this.len)} (the file shrank)`);
    }
    const o = this.pos - this.start;
    this.pos += k;
    return o;
  }

  u8 = () => this.buf.readUInt8(this.at(1));
  i8 = () => this.buf.readInt8(this.at(1));
  u16 = () => this.buf.readUInt16LE(this.at(2));
  i16 = () => this.buf.readInt16LE(this.at(2));
  u32 = () => this.buf.readUInt32LE(this.at(4));
  i32 = () => this.buf.readInt32LE(this.at(4));
  f32 = () => this.buf.readFloatLE(this.at(4));
  u64 = () => this.buf.readBigUInt64LE(this.at(8));
  i64 = () => this.buf.readBigInt64LE(this.at(8));
  f64 = () => this.buf.readDoubleLE(this.at(8));

  /** A string's length, held to `cap` (word: what the message says), then the metadata cap and the file. */
  strLen(cap: number, word: string): number {
    const o = this.at(8);
    const lo = this.buf.readUInt32LE(o);
    const hi = this.buf.readUInt32LE(o + 4);
    if (hi !== 0 || lo > cap) {
      const len = (BigInt(hi) << 32n) | BigInt(lo);
      throw this.refuse(`${word} ${n(len)} bytes, over the ${byteText(cap)} cap, in ${this.reading}; not read`);
    }
    this.room(lo);
    return lo;
  }

  /** `k` bytes (already checked by strLen) as UTF-8. */
  text(k: number): string {
    if (k <= WINDOW) {
      const o = this.at(k);
      return this.buf.toString('utf8', o, o + k);
    }
    const big = Buffer.allocUnsafe(k); // ≤ maxStringBytes, and inside the file
    const got = readSync(this.fd, big, 0, k, this.pos);
    if (got < k) throw this.refuse(`${W.truncated} at byte ${n(this.pos + got)} (the file shrank)`);
    this.pos += k;
    return big.toString('utf8');
  }

  skip(k: number): void {
    this.room(k);
    this.pos += k;
  }

  /** A key or tensor name of `k` bytes for messages and lookups: at most NAME_SHOWN bytes of it are
   *  decoded (a name may claim 64 KiB, and a tensor table 10⁶ of them), the rest skipped. */
  name(k: number): string {
    if (k <= NAME_SHOWN) return this.text(k);
    const head = this.text(NAME_SHOWN);
    this.skip(k - NAME_SHOWN);
    return `${head}… (${n(k)} bytes)`;
  }

  /** Which array nesting level is being read (arrays of arrays: at most L.maxArrayDepth). */
  depth = 0;

  value(type: number, keep: boolean): Value {
    this.tick();
    switch (type) {
      case 0:
        return this.u8();
      case 1:
        return this.i8();
      case 2:
        return this.u16();
      case 3:
        return this.i16();
      case 4:
        return this.u32();
      case 5:
        return this.i32();
      case 6:
        return this.f32();
      case 7:
        return this.u8() !== 0;
      case 10:
        return safe(this.u64());
      case 11:
        return safe(this.i64());
      case 12:
        return this.f64();
      case 8: {
        const len = this.strLen(L.maxStringBytes, W.stringLength);
        if (keep) return this.text(len);
        this.skip(len);
        return { skipped: 'string', bytes: BigInt(len) };
      }
      case 9: {
        const from = this.pos;
        const elem = this.array();
        return { skipped: 'array', bytes: BigInt(this.pos - from), elem };
      }
      default:
        throw this.refuse(`${this.reading} has unknown ${W.valueType} ${type}`);
    }
  }

  /** Steps over an array (its element type, count and elements) with plain numbers, no object per
   *  element: 5·10⁶ nested empty arrays are one key's worth within the caps. Its element type. */
  private array(): number {
    if (this.depth >= L.maxArrayDepth)
      throw this.refuse(`${this.reading}: ${W.array}s nested deeper than ${L.maxArrayDepth}; not read`);
    const elem = this.u32();
    const o = this.at(8);
    const lo = this.buf.readUInt32LE(o);
    const hi = this.buf.readUInt32LE(o + 4);
    const min = MIN_BYTES[elem];
    if (min === undefined) throw this.refuse(`${this.reading}: an array of unknown ${W.valueType} ${elem}`);
    const left = this.size - this.pos;
    if (hi !== 0 || lo * min > L.maxArrayBytes || lo * min > left) {
      const count = (BigInt(hi) << 32n) | BigInt(lo);
      const bytes = count * BigInt(min);
      const what = `${this.reading}: an ${W.array} of ${n(count)} elements (at least ${n(bytes)} bytes)`;
      if (bytes > BigInt(L.maxArrayBytes))
        throw this.refuse(`${what}, over the ${byteText(L.maxArrayBytes)} cap; not read`);
      throw this.refuse(`${what}, more than the ${n(left)} bytes left in the file`);
    }
    // The vocabulary, merges and token types are only counted: fixed-size elements are skipped whole.
    if (elem !== 8 && elem !== 9) this.skip(lo * min);
    else if (elem === 8)
      for (let i = 0; i < lo; i++) {
        this.tick();
        this.skip(this.strLen(L.maxStringBytes, W.stringLength));
      }
    else {
      this.depth++;
      for (let i = 0; i < lo; i++) {
        this.tick();
        this.array();
      }
      this.depth--;
    }
    return elem;
  }
}

/** A u64/i64 as a number when it is one exactly. */
const safe = (v: bigint): number | bigint =>
  v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;

/** The tensor table as the summary and the checks need it, gathered entry by entry: nothing is kept
 *  per tensor (10⁶ entries with 64 KiB names once held gigabytes). */
interface TensorTable {
  count: number;
  /** The largest offset + bytes of any tensor (from the data section's start), and whose. */
  end: bigint;
  endName: string;
  types: Record<string, number>;
  parameters: number;
  /** The first tensor of a type the importer does not dequantize. */
  unsupported: { name: string; type: string } | null;
  /** The first tensor that is not part of a model the importer builds (when the metadata was fine). */
  unknown: string | null;
  /** The tensors seen that the importer builds (≤ 13,316 names of ≤ 30 bytes) and their dimensions (ggml
   *  order), when the metadata was fine. */
  seen: Map<string, bigint[]>;
}

/** What the gate read: the header passes every limit; `problem` is why the importer would refuse it. */
export interface GgufInspection {
  summary: GgufSummary;
  problem: string | null;
}

/**
 * The gate and the summary in one read. Throws a GateError (the file is refused: not a regular file,
 * a limit, truncated, a tensor outside the file); what the importer would refuse (no or an unsupported
 * architecture, a key it needs, a tensor it does not build or dequantize) is returned as `problem`
 * (the page still shows what the file is). With `early` (an import about to start, not a listing), that
 * problem is thrown as invalid_input as soon as it is known, before the rest of the header is read.
 */
export function inspectGguf(path: string, opts: { budgetMs?: number; early?: boolean } = {}): GgufInspection {
  const file = basename(path);
  const { fd, size } = openGatedSync(path, 'GGUF model file');
  try {
    const c = new Cursor(fd, size, path, opts.budgetMs ?? L.budgetMs);
    if (size < 4) throw c.refuse(`${W.truncated}: ${size} bytes, too short for a GGUF header`);
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    if (magic.toString('latin1') !== 'GGUF') throw c.refuse(`not a GGUF file (no GGUF ${W.magic})`);
    c.pos = 4;
    c.reading = 'the preamble';
    const version = c.u32();
    if (!(L.versions as readonly number[]).includes(version)) throw c.refuse(versionRefusal(version));
    const nTensors = c.u64();
    const nKv = c.u64();
    if (nKv > BigInt(L.maxKeys)) throw c.refuse(`metadata ${W.keyCount} ${n(nKv)}, over the cap of ${n(L.maxKeys)}`);
    if (nTensors > BigInt(L.maxTensors))
      throw c.refuse(`${W.tensorCount} ${n(nTensors)}, over the cap of ${n(L.maxTensors)}`);
    const early = (problem: string | null) => {
      if (problem && opts.early) throw new StudioError('invalid_input', problem);
      return problem;
    };
    const tooMany = nTensors > BigInt(IMPORT_MAX_TENSORS) ? tensorsProblem(file, nTensors) : null;
    early(tooMany);
    const kv = readMetadata(c, nKv);
    const alignment = alignmentOf(c, kv);
    const meta = metadataProblem(file, kv);
    const metaProblem = early('problem' in meta ? meta.problem : null);
    const model = 'blocks' in meta ? meta : null;
    const table = readTensorTable(c, nTensors, file, model, opts.early === true);
    const dataStart = ((BigInt(c.pos) + alignment - 1n) / alignment) * alignment;
    const { types, parameters } = table;
    if (table.count > 0 && dataStart + table.end > BigInt(size))
      throw c.refuse(
        `${W.truncated}: tensor '${table.endName}' ends at byte ${n(dataStart + table.end)}, ${W.outside} (${n(size)} bytes)`,
      );
    const get = (k: string) => kv.get(k)?.value;
    const num = (k: string) => (typeof get(k) === 'number' ? (get(k) as number) : null);
    const str = (k: string) => (typeof get(k) === 'string' ? (get(k) as string) : null);
    const arch = str('general.architecture');
    const name = str('general.name') ?? file;
    const ftype = num('general.file_type');
    const common = Object.entries(types).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
    const summary: GgufSummary = {
      path,
      bytes: size,
      version,
      architecture: arch ?? 'unknown',
      name,
      family: arch === 'qwen2' ? 'qwen2' : /mistral/i.test(name) ? 'mistral' : (arch ?? 'unknown'),
      parameters,
      quantization: ftype !== null && FILE_TYPES[ftype] ? FILE_TYPES[ftype] : common,
      tensorTypes: types,
      context: arch ? num(`${arch}.context_length`) : null,
      layers: arch ? num(`${arch}.block_count`) : null,
      hidden: arch ? num(`${arch}.embedding_length`) : null,
      chatTemplate: str('tokenizer.chat_template'),
      tensors: table.count,
    };
    return { summary, problem: metaProblem ?? tooMany ?? tableProblem(file, model!, table, kv) };
  } finally {
    closeSync(fd);
  }
}

type Metadata = Map<string, { type: number; value: Value }>;

/** The key/value section: the keys the page shows kept, every other value skipped unread. */
function readMetadata(c: Cursor, nKv: bigint): Metadata {
  const kv: Metadata = new Map();
  c.metaFrom = PREAMBLE;
  let last: string | null = null;
  for (let i = 0; i < Number(nKv); i++) {
    c.reading = last === null ? 'the first metadata key' : `the metadata key after ${JSON.stringify(last)}`;
    const key = c.name(c.strLen(L.maxKeyBytes, W.keyLength));
    c.reading = `metadata key ${JSON.stringify(key)}`;
    const type = c.u32();
    kv.set(key, { type, value: c.value(type, WANTED.has(key)) });
    last = key;
  }
  c.metaFrom = null;
  return kv;
}

/** `general.alignment` (default 32): an integer power of two within the cap, else the file is refused. */
function alignmentOf(c: Cursor, kv: Metadata): bigint {
  const align = kv.get('general.alignment');
  if (!align) return 32n;
  const v = align.value;
  const ok = INTEGER_TYPES.has(align.type) && (typeof v === 'number' || typeof v === 'bigint');
  const big = ok ? BigInt(v) : 0n;
  if (!ok || big < 1n || big > BigInt(L.maxAlignment) || (big & (big - 1n)) !== 0n)
    throw c.refuse(
      `metadata key '${W.alignment}' is ${typeof v === 'object' ? `a ${v.skipped}` : JSON.stringify(String(v))}: it must be an integer ≥ 1, a power of two, at most ${byteText(L.maxAlignment)}`,
    );
  return big;
}

/** The tensor table: each entry's name, dimensions, type and data offset, checked and counted. With the
 *  model's `blocks` (its metadata is what the importer needs), names are checked against what it builds;
 *  `early`: the first name it does not build is thrown at once. */
function readTensorTable(
  c: Cursor,
  nTensors: bigint,
  file: string,
  model: { arch: string; blocks: number } | null,
  early: boolean,
): TensorTable {
  const t: TensorTable = {
    count: Number(nTensors),
    end: 0n,
    endName: '',
    types: {},
    parameters: 0,
    unsupported: null,
    unknown: null,
    seen: new Map(),
  };
  for (let i = 0; i < t.count; i++) {
    c.tick();
    c.reading = `the tensor table entry ${i + 1} of ${n(nTensors)}`;
    const name = c.name(c.strLen(L.maxKeyBytes, `tensor ${W.nameLength}`));
    c.reading = `the tensor table entry '${name}'`;
    let keep = false;
    if (model !== null && t.unknown === null) {
      if (!importable(name, model.blocks)) {
        t.unknown = name;
        if (early) throw new StudioError('invalid_input', unknownTensorProblem(file, name, model));
      } else keep = true;
    }
    const dims = c.u32();
    if (dims > L.maxDims) throw c.refuse(`tensor '${name}' has ${dims} ${W.dims} (at most ${L.maxDims})`);
    let elements = 1n;
    const shape: bigint[] = [];
    for (let d = 0; d < dims; d++) {
      shape.push(c.u64());
      elements *= shape[d]!;
    }
    if (keep) t.seen.set(name, shape);
    const type = c.u32();
    if (!GGML_TYPES[type]) throw c.refuse(`tensor '${name}' has unknown ${W.tensorType} ${type}`);
    const [typeName, block, blockBytes] = GGML_TYPES[type];
    const end = c.u64() + ((elements + BigInt(block) - 1n) / BigInt(block)) * BigInt(blockBytes);
    if (end > t.end) [t.end, t.endName] = [end, name];
    t.types[typeName] = (t.types[typeName] ?? 0) + 1;
    if (name !== 'rope_freqs.weight') t.parameters += Number(elements);
    if (!t.unsupported && !GGUF_SUPPORTED_TYPES.includes(typeName)) t.unsupported = { name, type: typeName };
  }
  return t;
}

/** The version word of a refusal; a file written big-endian (its version's bytes reversed) is named so,
 *  as the Python gate names it. */
function versionRefusal(version: number): string {
  const swapped = Buffer.alloc(4);
  swapped.writeUInt32BE(version);
  const be = swapped.readUInt32LE();
  if ((L.versions as readonly number[]).includes(be))
    return `a big-endian GGUF file (byte order big-endian, ${W.version} ${be}); only little-endian files are read`;
  return `GGUF ${W.version} ${version} is not supported (2 and 3 are)`;
}

/** The value types a required key may have (GGUF_IMPORTER.requiredKeys). */
const KINDS: Record<string, (type: number, value: Value) => boolean> = {
  integer: (type) => INTEGER_TYPES.has(type),
  float: (type) => type === 6 || type === 12,
  string: (type) => type === 8,
  'array of strings': (type, value) => type === 9 && typeof value === 'object' && 'elem' in value && value.elem === 8,
};
const TYPE_NAMES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array'];
TYPE_NAMES[10] = 'uint64';
TYPE_NAMES[11] = 'int64';
TYPE_NAMES[12] = 'float64';

/** "an int32", "a uint8", "an array": the word with its article. */
const article = (word: string) => `${/^[ai]/.test(word) ? 'an' : 'a'} ${word}`;

/** Why the importer would refuse the metadata (in the order its gate checks it), or the model's layers. */
function metadataProblem(file: string, kv: Metadata): { problem: string } | { arch: string; blocks: number } {
  const no = (problem: string) => ({ problem: `${file}: ${problem}` });
  const a = kv.get('general.architecture');
  if (!a) return no(`metadata key 'general.architecture' missing`);
  const arch = typeof a.value === 'string' ? a.value : null;
  if (arch === null || !(GGUF_ARCHITECTURES as readonly string[]).includes(arch))
    return no(
      `general.architecture ${arch === null ? 'is not a string, so it' : `'${arch}'`} is not supported (supported: ${GGUF_ARCHITECTURES.join(', ')}; Mistral files are 'llama')`,
    );
  const key = `${arch}.block_count`;
  const b = kv.get(key);
  if (!b) return no(`metadata key '${key}' missing; the importer needs it`);
  if (typeof b.value !== 'number' || !INTEGER_TYPES.has(b.type) || b.value < 1 || b.value > GGUF_IMPORTER.maxLayers)
    return no(
      `${key} = ${typeof b.value === 'object' ? `a ${b.value.skipped}` : String(b.value)}; this importer builds 1 to ${n(GGUF_IMPORTER.maxLayers)} layers`,
    );
  for (const [pattern, kind] of GGUF_IMPORTER.requiredKeys) {
    const k = pattern.replace('{arch}', arch);
    const v = kv.get(k);
    if (!v) return no(`metadata key '${k}' missing; the importer needs it`);
    if (!KINDS[kind]!(v.type, v.value)) {
      const elem =
        typeof v.value === 'object' && 'elem' in v.value ? ` of ${TYPE_NAMES[v.value.elem] ?? v.value.elem}` : '';
      return no(
        `metadata key '${k}' is ${article(TYPE_NAMES[v.type] ?? String(v.type))}${elem}; the importer needs ${article(kind)}`,
      );
    }
  }
  return { arch, blocks: b.value };
}

function tensorsProblem(file: string, count: bigint): string {
  return `${file}: ${n(count)} tensors: more than a model this importer builds has (at most ${n(IMPORT_MAX_TENSORS)}, for ${n(GGUF_IMPORTER.maxLayers)} layers)`;
}

function unknownTensorProblem(file: string, name: string, model: { arch: string; blocks: number }): string {
  return `${file}: tensor '${name}' is not part of a ${model.arch} model this importer builds (${model.blocks} layers)`;
}

/** A tensor the importer builds for a model of `blocks` layers (llama.cpp's names). */
function importable(name: string, blocks: number): boolean {
  if (GLOBAL_TENSOR.has(name)) return true;
  const m = /^blk\.(\d+)\.(.+)$/.exec(name);
  return m !== null && Number(m[1]) < blocks && LAYER_TENSOR.has(m[2]!);
}

/** Why the importer would refuse the tensor table of a header whose metadata it takes, or null: in the
 *  order its gate checks it (gguf_gate.py check_importable, _check_model), each tensor of LlamaLM present
 *  with the shape the metadata implies; then a type it dequantizes. */
function tableProblem(
  file: string,
  model: { arch: string; blocks: number },
  table: TensorTable,
  kv: Metadata,
): string | null {
  if (table.unknown !== null) return unknownTensorProblem(file, table.unknown, model);
  if (!table.seen.has('token_embd.weight')) return `${file}: tensor 'token_embd.weight' missing`;
  const shapes = expectedShapes(file, model, table, kv);
  if (typeof shapes === 'string') return shapes;
  const { want, headDim } = shapes;
  const noVocab = want.get('token_embd.weight')![1]! < 1n; // token_embd.weight not [hidden, vocab]: every shape is off
  for (const [name, dims] of table.seen) {
    if (name === 'rope_freqs.weight') continue;
    const shape = want.get(name) ?? (name === 'output.weight' ? want.get('token_embd.weight') : undefined);
    if (shape === undefined) return unknownTensorProblem(file, name, model);
    if (!sameShape(dims, shape) || noVocab)
      return `${file}: tensor '${name}' has shape ${tuple(dims)}, the metadata implies ${tuple(shape)}`;
  }
  const missing = [...want.keys()].filter((t) => !table.seen.has(t));
  if (missing.length) return `${file}: tensor '${missing[0]}' missing (${missing.length} of ${want.size} missing)`;
  const rope = table.seen.get('rope_freqs.weight');
  if (rope && !sameShape(rope, [BigInt(headDim / 2)]))
    return `${file}: tensor 'rope_freqs.weight' has shape ${tuple(rope)}; a head of ${headDim} dimensions needs (${headDim / 2},)`;
  const u = table.unsupported;
  if (u)
    return `${file}: tensor '${u.name}' has quantization type ${u.type}, which is not supported (supported: ${GGUF_SUPPORTED_TYPES.join(', ')})`;
  return null;
}

/** The most dimensions of a head the importer builds (gguf_gate.py MAX_HEAD_DIM; models have 64 to 256). */
const MAX_HEAD_DIM = 65_536;

const sameShape = (a: bigint[], b: bigint[]) => a.length === b.length && a.every((d, i) => d === b[i]);
/** Dimensions in the importer's (row-major) order, as Python prints a tuple: "(64, 128)", "(64,)". */
const tuple = (dims: bigint[]) => {
  const r = [...dims].reverse().map(String);
  return `(${r.join(', ')}${r.length === 1 ? ',' : ''})`;
};

/**
 * The shape (ggml order) of every tensor LlamaLM has, from the sizes in the metadata, as the importer's
 * gate computes them (gguf_gate.py _check_model): or why those sizes cannot be built.
 */
function expectedShapes(
  file: string,
  model: { arch: string; blocks: number },
  table: TensorTable,
  kv: Metadata,
): { want: Map<string, bigint[]>; headDim: number } | string {
  const a = model.arch;
  const integer = (key: string, fallback: number | null, least = 1): number | string => {
    const v = kv.get(key);
    if (!v && fallback !== null) return fallback;
    const x = v && INTEGER_TYPES.has(v.type) ? v.value : null;
    const got = typeof x === 'bigint' ? Number(x) : x;
    if (typeof got !== 'number' || got < least) {
      const shown =
        typeof v?.value === 'object' && v.value !== null && 'skipped' in v.value
          ? `a ${v.value.skipped}`
          : String(v?.value ?? 'None');
      return `${file}: ${key} = ${shown}; the importer needs a whole number ≥ ${least}`;
    }
    return got;
  };
  const hidden = integer(`${a}.embedding_length`, null);
  if (typeof hidden === 'string') return hidden;
  const heads = integer(`${a}.attention.head_count`, null);
  if (typeof heads === 'string') return heads;
  const kvHeads = integer(`${a}.attention.head_count_kv`, heads);
  if (typeof kvHeads === 'string') return kvHeads;
  const ffn = integer(`${a}.feed_forward_length`, null);
  if (typeof ffn === 'string') return ffn;
  const keyLength = integer(`${a}.attention.key_length`, 0, 0);
  if (typeof keyLength === 'string') return keyLength;
  const ropeDims = integer(`${a}.rope.dimension_count`, 0, 0);
  if (typeof ropeDims === 'string') return ropeDims;
  const headDim = keyLength || ropeDims || Math.floor(hidden / heads);
  if (heads % kvHeads)
    return `${file}: ${a}.attention.head_count ${heads} is not a multiple of head_count_kv ${kvHeads}`;
  if (headDim < 2 || headDim % 2 || headDim > MAX_HEAD_DIM)
    return `${file}: a head of ${n(headDim)} dimensions; RoPE needs an even number, at most ${n(MAX_HEAD_DIM)}`;
  const scaling = kv.get(`${a}.rope.scaling.type`)?.value ?? 'none';
  if (scaling !== 'none' && scaling !== 'linear')
    return `${file}: ${a}.rope.scaling.type '${typeof scaling === 'object' ? `a ${scaling.skipped}` : String(scaling)}' is not supported (none, linear, and llama3 as rope_freqs.weight)`;
  if (scaling === 'linear' && !kv.has(`${a}.rope.scaling.factor`))
    return `${file}: metadata key '${a}.rope.scaling.factor' missing; the importer needs it for linear scaling`;
  const embd = table.seen.get('token_embd.weight')!;
  const vocab = embd.length === 2 ? embd[1]! : 0n;
  const [h, f, q, k] = [hidden, ffn, heads * headDim, kvHeads * headDim].map(BigInt) as [
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  const want = new Map<string, bigint[]>([
    ['token_embd.weight', [h, vocab]],
    ['output_norm.weight', [h]],
  ]);
  const layer: [string, bigint[]][] = [
    ['attn_norm.weight', [h]],
    ['ffn_norm.weight', [h]],
    ['attn_q.weight', [h, q]],
    ['attn_k.weight', [h, k]],
    ['attn_v.weight', [h, k]],
    ['attn_output.weight', [q, h]],
    ['ffn_gate.weight', [h, f]],
    ['ffn_up.weight', [h, f]],
    ['ffn_down.weight', [f, h]],
  ];
  if (table.seen.has('blk.0.attn_q.bias')) layer.push(['attn_q.bias', [q]], ['attn_k.bias', [k]], ['attn_v.bias', [k]]);
  if (table.seen.has('blk.0.attn_output.bias')) layer.push(['attn_output.bias', [h]]);
  for (let i = 0; i < model.blocks; i++) for (const [t, d] of layer) want.set(`blk.${i}.${t}`, d);
  return { want, headDim };
}

/**
 * The header of `path` through the gate, checked as the importer will check it (`check`, default on):
 * a supported architecture, every tensor of a supported type. Throws a GateError or invalid_input
 * naming the key or tensor.
 */
export function readGgufHeader(path: string, opts: { check?: boolean; budgetMs?: number } = {}): GgufSummary {
  const { summary, problem } = inspectGguf(path, opts);
  if (problem && (opts.check ?? true)) throw new StudioError('invalid_input', problem);
  return summary;
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
