// The limits a GGUF header must keep before anything it claims is allocated or read, shared with the
// Python importer's gate (tests/fixtures/gguf-gate-cases.json holds the same numbers and the crafted
// headers both sides refuse; docs/security.md "GGUF files"). A real model stays far inside them:
// a 150k-token vocabulary is an array of about 2 MB, its chat template a few KB.
const KiB = 1024;
const MiB = 1024 * KiB;

export const GGUF_LIMITS = {
  /** Header versions read (ggml docs/gguf.md: 1 had 32-bit counts). */
  versions: [2, 3],
  /** Metadata key/value pairs. */
  maxKeys: 65_536,
  /** Tensor table entries. */
  maxTensors: 1_000_000,
  /** A metadata key's or a tensor name's bytes. */
  maxKeyBytes: 64 * KiB,
  /** A string value's bytes. */
  maxStringBytes: 16 * MiB,
  /** An array's length × its element's smallest size (8 bytes for a string: its length). */
  maxArrayBytes: 64 * MiB,
  /** All key/value bytes together, from the end of the 24-byte preamble to the tensor table. */
  maxMetadataBytes: 64 * MiB,
  /** general.alignment, when present: an integer ≥ 1, a power of two, at most this. */
  maxAlignment: 1 * MiB,
  /** Arrays of arrays (llama.cpp writes none; Python's gate: MAX_ARRAY_DEPTH). */
  maxArrayDepth: 4,
  /** A tensor's dimensions (ggml's GGML_MAX_DIMS). */
  maxDims: 4,
  /** Time one header may take to read, ms (a folder scan skips a file past it). */
  budgetMs: 2_000,
} as const;

/** The word each refusal's message holds, the same in Node and Python (the case file's `refusal`). */
export const GGUF_REFUSALS = {
  special: 'not a regular file',
  magic: 'magic',
  version: 'version',
  keyCount: 'key count',
  tensorCount: 'tensor count',
  keyLength: 'key length',
  nameLength: 'name length',
  stringLength: 'string length',
  array: 'array',
  metadataBytes: 'metadata bytes',
  alignment: 'general.alignment',
  valueType: 'value type',
  dims: 'dimensions',
  tensorType: 'tensor type',
  outside: 'outside the file',
  truncated: 'truncated',
  budget: 'time budget',
} as const;
