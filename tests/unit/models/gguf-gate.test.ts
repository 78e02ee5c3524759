// The GGUF gate (main/models/gguf.ts, docs/security.md "GGUF files") on every crafted header of
// tests/fixtures/gguf-gate-cases.json: each is refused with its word, a FIFO and /dev/zero before any
// open, and a huge claim without allocating it. Before the gate a 4 KB file whose key claimed 400 MB
// took 26 s and 3.9 GB, the FIFO hung the reader, and general.alignment = 0 passed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GGUF_LIMITS } from '../../../main/models/gguf-limits';
import { GGUF_IMPORTER, inspectGguf, readGgufHeader } from '../../../main/models/gguf';
import { buildCase, CASES, type Field, type GateCase } from './gguf-cases';

const dir = mkdtempSync(join(tmpdir(), 'pskills-gguf-gate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the GGUF gate on the shared crafted headers', () => {
  it('holds the same limits as the case file', () => {
    const l = CASES.limits;
    expect([
      l.max_keys,
      l.max_tensors,
      l.max_key_bytes,
      l.max_string_bytes,
      l.max_array_bytes,
      l.max_metadata_bytes,
      l.max_alignment,
      l.max_dims,
      l.budget_ms,
      l.versions,
    ]).toEqual([
      GGUF_LIMITS.maxKeys,
      GGUF_LIMITS.maxTensors,
      GGUF_LIMITS.maxKeyBytes,
      GGUF_LIMITS.maxStringBytes,
      GGUF_LIMITS.maxArrayBytes,
      GGUF_LIMITS.maxMetadataBytes,
      GGUF_LIMITS.maxAlignment,
      GGUF_LIMITS.maxDims,
      GGUF_LIMITS.budgetMs,
      GGUF_LIMITS.versions,
    ]);
  });

  it.each(CASES.cases.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
    const path = buildCase(c, dir, `case-${i}.gguf`);
    let err: unknown = null;
    try {
      readGgufHeader(path, { check: false });
    } catch (e) {
      err = e;
    }
    if (c.refusal === null) expect(err).toBeNull();
    else {
      expect(err, 'refused').toBeInstanceOf(Error);
      const message = (err as Error).message;
      expect(message).toContain(path);
      expect(message).toContain(c.refusal);
      if (c.special) expect(message).toContain('not opened');
    }
  });
});

const IMPORTABLE = CASES.cases.find((c) => c.name.includes('every metadata key the importer needs'))!;

/** The importable case with the key `key` (and its value) left out. */
function without(key: string): GateCase {
  const f = IMPORTABLE.fields!;
  const at = f.findIndex(([op, v]) => op === 'str' && v === key);
  const valueFields = key === 'tokenizer.ggml.tokens' ? 4 : 2;
  const fields: Field[] = [...f.slice(0, at), ...f.slice(at + 1 + valueFields)];
  fields[3] = ['u64', Number(f[3]![1]) - 1]; // the key count
  return { name: `without ${key}`, fields, refusal: null };
}

describe('what the importer needs, checked by the gate before it starts', () => {
  it('holds the same keys as the case file and the Python gate', () => {
    const imp = (CASES as unknown as { importer: { required_keys: string[]; max_layers: number } }).importer;
    expect(GGUF_IMPORTER.requiredKeys.map(([k]) => k)).toEqual(imp.required_keys);
    expect(GGUF_IMPORTER.maxLayers).toBe(imp.max_layers);
  });

  it('names the first key missing, then the first tensor missing', () => {
    // Every key: the tensors are checked next (LlamaLM's eleven for one layer; the Python gate their shapes too).
    const keys = inspectGguf(buildCase(IMPORTABLE, dir, 'keys.gguf'));
    expect(keys.summary).toMatchObject({ layers: 1, hidden: 32 });
    expect(keys.problem).toBe("keys.gguf: tensor 'output_norm.weight' missing (10 of 11 missing)");
    // The probe's ok_llama.gguf: an architecture, a block count and token_embd.weight, none of the sizes.
    // It passed and started the importer, which loaded torch (3.5 s, 330 MB) before naming the key.
    for (const [key] of GGUF_IMPORTER.requiredKeys) {
      const k = key.replace('{arch}', 'llama');
      const path = buildCase(without(k), dir, `without-${k}.gguf`);
      expect(inspectGguf(path).problem).toBe(`without-${k}.gguf: metadata key '${k}' missing; the importer needs it`);
    }
    const noBlocks = buildCase(without('llama.block_count'), dir, 'no-blocks.gguf');
    expect(inspectGguf(noBlocks).problem).toContain("metadata key 'llama.block_count' missing");
  });

  it('names a wrong value type, an unknown tensor and too many tensors; early, before the rest is read', () => {
    const f = IMPORTABLE.fields!;
    const at = f.findIndex(([op, v]) => op === 'str' && v === 'llama.embedding_length');
    const asFloat: Field[] = [...f];
    asFloat[at + 1] = ['u32', 6];
    asFloat[at + 2] = ['f32', 32];
    const float = buildCase({ ...IMPORTABLE, fields: asFloat }, dir, 'float.gguf');
    expect(inspectGguf(float).problem).toBe(
      "float.gguf: metadata key 'llama.embedding_length' is a float32; the importer needs an integer",
    );
    const renamed = f.map(([op, v]): Field => [op, v === 'token_embd.weight' ? 'blk.1.attn_q.weight' : v]);
    const unknown = buildCase({ ...IMPORTABLE, fields: renamed }, dir, 'unknown.gguf');
    expect(inspectGguf(unknown).problem).toBe(
      "unknown.gguf: tensor 'blk.1.attn_q.weight' is not part of a llama model this importer builds (1 layers)",
    );
    // 10^6 tensors in a 4 KB file: the gate refuses it as truncated after walking; an import refuses it
    // from the preamble.
    const many = buildCase(
      CASES.cases.find((c) => c.name === 'a tensor count of 10^6 in a 4 KB file')!,
      dir,
      'many.gguf',
    );
    expect(() => inspectGguf(many)).toThrow(/truncated/);
    expect(() => inspectGguf(many, { early: true })).toThrow(
      'many.gguf: 1,000,000 tensors: more than a model this importer builds has (at most 13,316, for 1,024 layers)',
    );
  });
});

describe('each tensor of the model against the sizes in the metadata', () => {
  // Node checked that each tensor was present but not its shape: a file with wrong shapes showed
  // problem: null on the Models page, and only the Python importer refused it. The same cases in
  // training/tests/test_gguf_gate.py.
  it.each(CASES.importer_cases.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
    const path = buildCase({ ...c, refusal: null }, dir, `importer-${i}.gguf`);
    const { problem } = inspectGguf(path);
    expect(problem).toBe(c.problem === null ? null : `importer-${i}.gguf: ${c.problem}`);
    // models.create and `bundle create --from-gguf` read the header so before starting the importer.
    if (c.problem !== null) expect(() => readGgufHeader(path)).toThrow(c.problem);
  });
});
