// llama.cpp LoRA GGUF export/import (main/adapters/gguf-lora-*.ts): exact f32 round trip, f16 as
// rounded, Llama's q/k row order against an independent reshape/swapaxes, the layout llama-adapter.cpp
// checks (lora_a dims [d_in, r], lora_b [r, d_out]), and the refusals. That llama.cpp itself loads the
// file and agrees with the engine is tests/int/adapters/gguf-llamacpp.int.test.ts.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ggufBaseOf, hfRowOf, type GgufBase } from '../../../main/adapters/gguf-lora-names';
import { decodeGgufLora, ggufLoraToAdapter, readGgufLoraFile } from '../../../main/adapters/gguf-lora-read';
import { encodeGgufLora, loraTensors } from '../../../main/adapters/gguf-lora-write';
import { writeGgufLoraFile } from '../../../main/adapters/gguf-lora-file';
import { fromHalfBits, toHalfBits } from '../../../main/adapters/half';
import type { Adapter } from '../../../main/adapters/types';
import { randomAdapter, type Shape } from './builders';

// A model with 4 q heads and 2 kv heads of size 4: hidden 16, q 16, kv 8, ffn 24.
const LLAMA: GgufBase = { arch: 'llama', heads: 4, kvHeads: 2 };
const QWEN: GgufBase = { arch: 'qwen2', heads: 4, kvHeads: 2 };
const SHAPES: Shape[] = [
  { layer: 0, module: 'q', dIn: 16, dOut: 16 },
  { layer: 0, module: 'k', dIn: 16, dOut: 8 },
  { layer: 0, module: 'v', dIn: 16, dOut: 8 },
  { layer: 0, module: 'o', dIn: 16, dOut: 16 },
  { layer: 1, module: 'gate', dIn: 16, dOut: 24 },
  { layer: 1, module: 'up', dIn: 16, dOut: 24 },
  { layer: 1, module: 'down', dIn: 24, dOut: 16 },
];
const dims = new Map(SHAPES.map((s) => [s.module, { dIn: s.dIn, dOut: s.dOut }]));
const adapter = (seed = 1, over: Partial<Parameters<typeof randomAdapter>[0]> = {}) =>
  randomAdapter({ seed, rank: 3, alpha: 6.5, shapes: SHAPES, ...over });
const roundTrip = (a: Adapter, base: GgufBase, dtype: 'f32' | 'f16' = 'f32') =>
  ggufLoraToAdapter(decodeGgufLora(Buffer.from(encodeGgufLora(a, base, { dtype })), 'x.gguf'), base, dims, 'x.gguf');

/** ΔW as [d_out][d_in] (PEFT/torch layout) from our factors: (α/r)·(A·B)ᵀ. */
function deltaOut(p: { dIn: number; dOut: number; A: Float32Array; B: Float32Array }, r: number): number[][] {
  return Array.from({ length: p.dOut }, (_, o) =>
    Array.from({ length: p.dIn }, (_, i) => {
      let s = 0;
      for (let k = 0; k < r; k++) s += p.A[i * r + k]! * p.B[k * p.dOut + o]!;
      return s;
    }),
  );
}

/** convert_hf_to_gguf.py's permute, written as numpy does it: reshape(h, 2, d/2, …).swapaxes(1, 2). */
function permuteRows<T>(rows: T[], heads: number): T[] {
  const d = rows.length / heads;
  const out: T[] = [];
  for (let h = 0; h < heads; h++)
    for (let j = 0; j < d / 2; j++) for (let s = 0; s < 2; s++) out.push(rows[h * d + s * (d / 2) + j]!);
  return out;
}

describe('GGUF LoRA', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pskills-gguf-lora-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('round-trips exactly in f32, for llama (q/k rows permuted) and qwen2', () => {
    for (const base of [LLAMA, QWEN]) {
      const a = adapter(2);
      const back = roundTrip(a, base);
      expect(back.rank).toBe(3);
      expect(back.alpha).toBe(6.5);
      expect([...back.targets.keys()].sort()).toEqual([...a.targets.keys()].sort());
      for (const [k, p] of a.targets) {
        expect(back.targets.get(k)!.A).toEqual(p.A);
        expect(back.targets.get(k)!.B).toEqual(p.B);
      }
    }
  });

  it('keeps an alpha that float32 cannot hold exactly (our float64 copy) and llama.cpp gets the nearest float32', () => {
    const a = adapter(3, { alpha: 0.1 });
    const bytes = Buffer.from(encodeGgufLora(a, LLAMA));
    const f = decodeGgufLora(bytes, 'x');
    expect(f.meta.get('adapter.lora.alpha')).toBe(Math.fround(0.1));
    expect(f.alpha).toBe(0.1);
  });

  it('f16 stores each value rounded to nearest binary16', () => {
    expect(toHalfBits(1)).toBe(0x3c00);
    expect(toHalfBits(-2)).toBe(0xc000);
    expect(toHalfBits(65504)).toBe(0x7bff);
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00); // tie, to even
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, to even (up)
    expect(fromHalfBits(toHalfBits(2 ** -24))).toBe(2 ** -24); // smallest subnormal
    expect(fromHalfBits(toHalfBits(0.1))).toBeCloseTo(0.0999755859375, 12);
    const a = adapter(4);
    const back = roundTrip(a, LLAMA, 'f16');
    for (const [k, p] of a.targets)
      expect([...back.targets.get(k)!.A]).toEqual([...p.A].map((x) => fromHalfBits(toHalfBits(x))));
  });

  it('writes the layout llama-adapter.cpp checks, and ΔW in llama.cpp row order for Llama q/k only', () => {
    const a = adapter(5);
    for (const base of [LLAMA, QWEN]) {
      const tensors = loraTensors(a, base);
      expect(tensors.map((t) => t.name).slice(0, 4)).toEqual([
        'blk.0.attn_q.weight.lora_a',
        'blk.0.attn_q.weight.lora_b',
        'blk.0.attn_k.weight.lora_a',
        'blk.0.attn_k.weight.lora_b',
      ]);
      expect(tensors.map((t) => t.name).at(-1)).toBe('blk.1.ffn_down.weight.lora_b');
      for (const s of SHAPES) {
        const name = `blk.${s.layer}.${{ q: 'attn_q', k: 'attn_k', v: 'attn_v', o: 'attn_output', gate: 'ffn_gate', up: 'ffn_up', down: 'ffn_down' }[s.module]}.weight`;
        const A = tensors.find((t) => t.name === `${name}.lora_a`)!;
        const B = tensors.find((t) => t.name === `${name}.lora_b`)!;
        // model tensor ne = [d_in, d_out]: llama.cpp wants a.ne[0] = d_in, b.ne[1] = d_out, a.ne[1] = b.ne[0].
        expect(A.dims).toEqual([s.dIn, 3]);
        expect(B.dims).toEqual([3, s.dOut]);
        // ΔW (d_out × d_in) from the GGUF factors: B·A.
        const gg = Array.from({ length: s.dOut }, (_, o) =>
          Array.from({ length: s.dIn }, (_, i) => {
            let v = 0;
            for (let k = 0; k < 3; k++) v += B.data[o * 3 + k]! * A.data[k * s.dIn + i]!;
            return v;
          }),
        );
        const hf = deltaOut(a.targets.get(`${s.layer}.${s.module}`)!, 3);
        const heads = base.arch === 'llama' ? ({ q: 4, k: 2 } as Record<string, number>)[s.module] : undefined;
        const want = heads ? permuteRows(hf, heads) : hf;
        for (let o = 0; o < s.dOut; o++) for (let i = 0; i < s.dIn; i++) expect(gg[o]![i]).toBeCloseTo(want[o]![i]!, 5);
      }
    }
    // hfRowOf is the same map as the reshape/swapaxes above.
    const rows = Array.from({ length: 16 }, (_, i) => i);
    expect(rows.map((g) => hfRowOf(g, 16, 4))).toEqual(permuteRows(rows, 4));
  });

  it('writes to a temp name, reads it back through the gate, and renames', async () => {
    const file = join(dir, 'out', 'skill.gguf');
    await writeGgufLoraFile(file, adapter(6), LLAMA, { dtype: 'f32', name: 'skill' });
    expect(readdirSync(join(dir, 'out'))).toEqual(['skill.gguf']);
    const f = await readGgufLoraFile(file);
    expect(f).toMatchObject({ arch: 'llama', name: 'skill' });
    expect(f.meta.get('general.type')).toBe('adapter');
    expect(f.meta.get('adapter.type')).toBe('lora');
    await expect(writeGgufLoraFile(file, adapter(6), LLAMA, { dtype: 'f32' })).rejects.toThrow(
      /exists; not overwritten/,
    );
    await writeGgufLoraFile(file, adapter(7), LLAMA, { dtype: 'f16', overwrite: true });
    writeFileSync(join(dir, 'notes.gguf'), 'my notes');
    await expect(
      writeGgufLoraFile(join(dir, 'notes.gguf'), adapter(6), LLAMA, { dtype: 'f32', overwrite: true }),
    ).rejects.toThrow(/exists and is not a GGUF LoRA adapter/);
    expect(readFileSync(join(dir, 'notes.gguf'), 'utf8')).toBe('my notes');
    // A model GGUF (general.type "model") is not replaced either.
    const model = Buffer.from(encodeGgufLora(adapter(6), LLAMA));
    model.write('model!!', model.indexOf('adapter', model.indexOf('general.type')));
    writeFileSync(join(dir, 'base.gguf'), model);
    await expect(
      writeGgufLoraFile(join(dir, 'base.gguf'), adapter(6), LLAMA, { dtype: 'f32', overwrite: true }),
    ).rejects.toThrow(/exists and is not a GGUF LoRA adapter/);
    expect(readFileSync(join(dir, 'base.gguf')).equals(model)).toBe(true);
  });

  it('refuses what the format cannot hold, with the reason', async () => {
    const zero = adapter(8);
    for (const p of zero.targets.values()) p.B.fill(0);
    await expect(writeGgufLoraFile(join(dir, 'z.gguf'), zero, LLAMA, { dtype: 'f32' })).rejects.toThrow(
      /every ΔW is zero/,
    );
    expect(() =>
      encodeGgufLora(randomAdapter({ seed: 1, shapes: [{ layer: 0, module: 'lm_head', dIn: 4, dOut: 4 }] }), LLAMA),
    ).toThrow(/module "lm_head" has no llama\.cpp tensor/);
    expect(() => encodeGgufLora(adapter(1, { alpha: 0 }), LLAMA)).toThrow(/reads adapter\.lora\.alpha 0 as "no alpha"/);
    expect(() => encodeGgufLora({ rank: 0, alpha: 1, targets: new Map() }, LLAMA)).toThrow(/rank 0/);
    const big = adapter(9);
    big.targets.get('0.q')!.A[0] = 1e6;
    expect(() => encodeGgufLora(big, LLAMA, { dtype: 'f16' })).toThrow(/outside float16's range \(export as f32\)/);
    expect(() =>
      encodeGgufLora(randomAdapter({ seed: 1, rank: 2, shapes: [{ layer: 0, module: 'q', dIn: 16, dOut: 12 }] }), {
        ...LLAMA,
        heads: 4,
      }),
    ).toThrow(/d_out 12 is not 4 heads of an even size/);
  });

  it('says why the studio default and test bundles have no GGUF export, and which base others have', () => {
    const m = (card: Record<string, unknown>, family = 'llama') => ({
      id: 'b',
      architecture: { family, heads: 4, kv_heads: 2 },
      training_card: card,
    });
    expect(ggufBaseOf(m({ kind: 'pretrained' }))).toMatch(
      /studio's own base model.*no GGUF file of that base exists for llama\.cpp, Ollama or LM Studio/,
    );
    expect(ggufBaseOf(m({ kind: 'random init' }))).toMatch(/randomly initialised test model/);
    expect(ggufBaseOf(m({ kind: 'gguf', gguf: { architecture: 'qwen2' } }))).toMatchObject({ arch: 'qwen2' });
    expect(ggufBaseOf(m({ kind: 'hf checkpoint' }, 'mistral'))).toMatchObject({ arch: 'llama', heads: 4, kvHeads: 2 });
  });

  it('refuses, by name, a model GGUF, another architecture, another shape, a quantized or truncated file', () => {
    const good = Buffer.from(encodeGgufLora(adapter(10), LLAMA));
    // general.type "adapter" → "model!!" (same length): a model file.
    const model = Buffer.from(good);
    model.write('model!!', model.indexOf('adapter', model.indexOf('general.type')));
    expect(() => decodeGgufLora(model, 'm.gguf')).toThrow(/m\.gguf: not a LoRA adapter \(general\.type "model!!"/);
    expect(() => decodeGgufLora(Buffer.from('GGML not gguf'), 'n.gguf')).toThrow(/not a GGUF file/);
    const f = decodeGgufLora(good, 'a.gguf');
    expect(() => ggufLoraToAdapter(f, QWEN, dims, 'a.gguf')).toThrow(
      /a\.gguf: a LoRA for a llama model \(general\.architecture\); the current bundle's base is qwen2/,
    );
    const other = new Map(dims);
    other.set('v', { dIn: 16, dOut: 4 });
    expect(() => ggufLoraToAdapter(f, LLAMA, other, 'a.gguf')).toThrow(
      /tensor 'blk\.0\.attn_v\.weight': LoRA of shape \[16 → 8\], the current bundle's v projection is \[16 → 4\]: an adapter for another base/,
    );
    const q8 = Buffer.from(good);
    const name = Buffer.from('blk.0.attn_q.weight.lora_a');
    const at = q8.indexOf(name) + name.length;
    q8.writeUInt32LE(8, at + 4 + 16); // n_dims (u32), two u64 dims, then the type: Q8_0
    expect(() => decodeGgufLora(q8, 'q.gguf')).toThrow(
      /tensor 'blk\.0\.attn_q\.weight\.lora_a' is Q8_0; only F32 and F16/,
    );
    expect(() => decodeGgufLora(good.subarray(0, good.length - 100), 'cut.gguf')).toThrow(
      /cut\.gguf: truncated: tensor 'blk\.1\.ffn_down\.weight\.lora_b' ends at byte/,
    );
  });
});
