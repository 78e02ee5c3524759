import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readPeftDir, writePeftDir } from '../../../main/adapters/peft-dir';
import { readPeft, writePeft } from '../../../main/adapters/peft';
import { readSafetensors, writeSafetensors } from '../../../main/adapters/safetensors';
import { scale } from '../../../main/adapters/merge';
import { randomAdapter, type Shape } from './builders';

const LLAMA: Shape[] = [
  { layer: 0, module: 'q', dIn: 8, dOut: 8 },
  { layer: 0, module: 'v', dIn: 8, dOut: 4 },
  { layer: 1, module: 'down', dIn: 16, dOut: 8 },
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-peft-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('safetensors', () => {
  it('round-trips F32 and reads F16/BF16', () => {
    const t = new Map([['w', { shape: [2, 3], data: Float32Array.from([1, -2, 0.5, 3, 1e-3, -7]) }]]);
    const back = readSafetensors(writeSafetensors(t, { format: 'pt' }));
    expect([...back.tensors.get('w')!.data]).toEqual([...t.get('w')!.data]);
    expect(back.metadata).toEqual({ format: 'pt' });
    // 1.0 in F16 is 0x3c00; -2.0 in BF16 is 0xc000.
    const half = (dtype: string, bits: number) => {
      const header = new TextEncoder().encode(JSON.stringify({ x: { dtype, shape: [1], data_offsets: [0, 2] } }));
      const buf = new Uint8Array(8 + header.length + 2);
      new DataView(buf.buffer).setBigUint64(0, BigInt(header.length), true);
      buf.set(header, 8);
      new DataView(buf.buffer).setUint16(8 + header.length, bits, true);
      return readSafetensors(buf).tensors.get('x')!.data[0];
    };
    expect(half('F16', 0x3c00)).toBe(1);
    expect(half('BF16', 0xc000)).toBe(-2);
  });

  it('names the problem in a broken file', () => {
    expect(() => readSafetensors(new Uint8Array(3), 'x.safetensors')).toThrow(/x\.safetensors: too short/);
    const ok = writeSafetensors(new Map([['w', { shape: [2], data: Float32Array.from([1, 2]) }]]));
    expect(() => readSafetensors(ok.subarray(0, ok.length - 4), 'y.safetensors')).toThrow(/y\.safetensors: tensor "w"/);
  });
});

describe('PEFT directories', () => {
  it('uses the base architecture key names and PEFT layouts', () => {
    const a = randomAdapter({ seed: 1, rank: 2, alpha: 4, shapes: LLAMA });
    const { config, weights } = writePeft(a, { baseModel: 'tiny' });
    const keys = [...readSafetensors(weights).tensors.entries()].map(([k, t]) => `${k} [${t.shape}]`);
    expect(keys).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight [2,8]');
    expect(keys).toContain('base_model.model.model.layers.1.mlp.down_proj.lora_B.weight [8,2]');
    expect(JSON.parse(config)).toMatchObject({
      peft_type: 'LORA',
      r: 2,
      lora_alpha: 4,
      target_modules: ['down_proj', 'q_proj', 'v_proj'],
    });
  });

  it('writes, reads back and equals what was written', async () => {
    const a = randomAdapter({ seed: 2, rank: 3, alpha: 6, shapes: LLAMA });
    const out = join(dir, 'adapter');
    await writePeftDir(out, a, { skill: 'x' });
    const back = await readPeftDir(out);
    expect(back.sidecar).toEqual({ format: 'pskills.sidecar/1', skill: 'x' }); // the format marks the folder as ours
    expect(back.adapter.rank).toBe(3);
    expect(back.adapter.alpha).toBe(6);
    for (const [k, p] of a.targets) {
      expect([...back.adapter.targets.get(k)!.A]).toEqual([...p.A]);
      expect([...back.adapter.targets.get(k)!.B]).toEqual([...p.B]);
    }
    expect(readdirSync(dir)).toEqual(['adapter']); // no temp folder left behind
  });

  it('refuses an all-zero adapter and leaves nothing behind', async () => {
    const zero = scale(randomAdapter({ seed: 3, shapes: LLAMA }), 0);
    await expect(writePeftDir(join(dir, 'z'), zero, {})).rejects.toThrow(/every ΔW is zero/);
    expect(existsSync(join(dir, 'z'))).toBe(false);
  });

  it('rsLoRA carries α·√r so the scale stays α/√r', () => {
    const a = randomAdapter({ seed: 4, rank: 4, alpha: 8, shapes: LLAMA });
    const { config, weights } = writePeft(a, { baseModel: null });
    const rs = readPeft(JSON.stringify({ ...JSON.parse(config), use_rslora: true }), weights);
    expect(rs.alpha / rs.rank).toBeCloseTo(8 / Math.sqrt(4));
  });

  it('names the file and key of bad input', async () => {
    const a = randomAdapter({ seed: 5, rank: 2, shapes: LLAMA });
    const { config, weights } = writePeft(a, { baseModel: null });
    expect(() => readPeft('{', weights, 'd')).toThrow(/d\/adapter_config\.json: not valid JSON/);
    expect(() => readPeft(JSON.stringify({ ...JSON.parse(config), r: 3 }), weights, 'd')).toThrow(
      /rank 2\/2 in the tensors, r = 3/,
    );
    expect(() => readPeft(JSON.stringify({ ...JSON.parse(config), use_dora: true }), weights, 'd')).toThrow(/DoRA/);
    const odd = writeSafetensors(
      new Map([['model.layers.0.attn.c_attn.lora_A.weight', { shape: [2, 8], data: new Float32Array(16) }]]),
    );
    expect(() => readPeft(config, odd, 'd')).toThrow(
      /d\/adapter_model\.safetensors: key "model\.layers\.0\.attn\.c_attn/,
    );
    writeFileSync(join(dir, 'adapter_config.json'), config);
    await expect(readPeftDir(dir)).rejects.toThrow(/adapter_model\.safetensors: missing/);
    expect(readFileSync(join(dir, 'adapter_config.json'), 'utf8')).toBe(config);
  });
});
