// Hostile safetensors headers fail with an error naming the file and what is wrong, before any
// tensor memory is allocated.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import { readSafetensors } from '../../../main/adapters/safetensors';

const FILE = '/some/where/adapter_model.safetensors';

/** A safetensors file: u64 LE header length, the JSON header, then `body` bytes. */
function file(header: unknown, body = 8): Uint8Array {
  const json = Buffer.from(JSON.stringify(header));
  const out = Buffer.alloc(8 + json.length + body);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  return new Uint8Array(out);
}

const fails = (buf: Uint8Array) => {
  try {
    readSafetensors(buf, FILE);
  } catch (err) {
    expect(err).not.toBeInstanceOf(RangeError);
    return (err as Error).message;
  }
  throw new Error('expected readSafetensors to fail');
};

describe('readSafetensors on hostile headers', () => {
  it('a header that claims 450 MB is refused for the header cap, not for the file size', () => {
    const buf = new Uint8Array(1024);
    new DataView(buf.buffer).setBigUint64(0, 450_000_000n, true);
    expect(fails(buf)).toBe(
      `${FILE}: header length 450,000,000 bytes is over the 100 MiB cap on a safetensors header; not read`,
    ); // was: "does not fit the file (1024 bytes)"
  });

  it('a shape of [2^31, 2^31] over 8 bytes: the sizes do not match, nothing allocated', () => {
    const message = fails(file({ w: { dtype: 'F32', shape: [2 ** 31, 2 ** 31], data_offsets: [0, 8] } }));
    expect(message).toContain(FILE);
    expect(message).toMatch(
      /tensor "w": shape \[2147483648, 2147483648\] F32 needs over 2\^53 bytes, data_offsets \[0, 8\] hold 8: the sizes do not match/,
    );
  });

  it('a shape whose size overflows, and an unknown dtype with a huge shape', () => {
    expect(fails(file({ w: { dtype: 'F16', shape: [2 ** 26, 2 ** 26, 2 ** 26], data_offsets: [0, 8] } }))).toMatch(
      /the sizes do not match/,
    );
    expect(fails(file({ w: { dtype: 'F16', shape: [1e200], data_offsets: [0, 8] } }))).toMatch(
      /tensor "w": bad header entry/,
    );
    expect(fails(file({ w: { dtype: 'I4', shape: [2 ** 40], data_offsets: [0, 8] } }))).toMatch(
      /adapter_model\.safetensors: tensor "w" has dtype I4/,
    );
  });

  it.each([
    [{ a: 1 }, /"a" is a number/],
    [{ a: ['x'] }, /"a" is a list/],
    ['text', /is a string, not a mapping/],
    [['x'], /is a list, not a mapping/],
    [null, /is null, not a mapping/],
  ])('a non-string __metadata__ (%j) is a clear error naming the file', (metadata, why) => {
    const message = fails(file({ __metadata__: metadata, w: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }));
    expect(message).toMatch(new RegExp(`^${FILE.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: __metadata__ `));
    expect(message).toMatch(why);
  });

  it('still reads a good file', () => {
    const { tensors, metadata } = readSafetensors(
      file({ __metadata__: { format: 'pt' }, w: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }),
      FILE,
    );
    expect(metadata).toEqual({ format: 'pt' });
    expect([...tensors.get('w')!.data]).toEqual([0, 0]);
  });
});

describe('readPeftDir', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pskills-st-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the weights file of a folder with a hostile shape', async () => {
    writeFileSync(
      join(dir, 'adapter_config.json'),
      JSON.stringify({ peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['q_proj'] }),
    );
    writeFileSync(
      join(dir, 'adapter_model.safetensors'),
      file({
        'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight': {
          dtype: 'F32',
          shape: [2 ** 31, 2 ** 31],
          data_offsets: [0, 8],
        },
      }),
    );
    await expect(readPeftDir(dir)).rejects.toThrow(
      new RegExp(`${join(dir, 'adapter_model.safetensors')}: tensor .* the sizes do not match`),
    );
  });
});
