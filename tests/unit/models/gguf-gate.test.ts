// The GGUF gate (main/models/gguf.ts, docs/security.md "GGUF files") on every crafted header of
// tests/fixtures/gguf-gate-cases.json: each is refused with its word, a FIFO and /dev/zero before any
// open, and a huge claim without allocating it. Before the gate a 4 KB file whose key claimed 400 MB
// took 26 s and 3.9 GB, the FIFO hung the reader, and general.alignment = 0 passed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GGUF_LIMITS } from '../../../main/models/gguf-limits';
import { readGgufHeader } from '../../../main/models/gguf';
import { buildCase, CASES } from './gguf-cases';

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
