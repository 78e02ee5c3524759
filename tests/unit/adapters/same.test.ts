// adapterDiff: the one read-back comparison of the PEFT, GGUF LoRA and Ollama exports.
import { describe, expect, it } from 'vitest';
import { fromHalfBits, toHalfBits } from '../../../main/adapters/half';
import { adapterDiff, allZero, checkWritable } from '../../../main/adapters/same';
import type { Adapter } from '../../../main/adapters/types';
import { randomAdapter } from './builders';

/** A deep copy with `f` applied to every value. */
const mapValues = (a: Adapter, f: (x: number) => number): Adapter => ({
  ...a,
  targets: new Map(
    [...a.targets].map(([k, p]) => [k, { ...p, A: Float32Array.from(p.A, f), B: Float32Array.from(p.B, f) }]),
  ),
});

describe('adapterDiff', () => {
  const a = randomAdapter({ seed: 3 });
  const half = mapValues(a, (x) => fromHalfBits(toHalfBits(x)));

  it('is null for the same values, and names the first value that differs', () => {
    expect(
      adapterDiff(
        a,
        mapValues(a, (x) => x),
      ),
    ).toBeNull();
    const b = mapValues(a, (x) => x);
    const [key, p] = [...b.targets][1]!;
    p.B[2] = p.B[2]! + 1;
    expect(adapterDiff(a, b)).toMatch(new RegExp(`^${key.replace('.', '\\.')}\\.B\\[2\\] = `));
  });

  it('with round f16 accepts the float16-rounded values and only them', () => {
    expect(adapterDiff(a, half)).toMatch(/\.A\[0\] = /); // float32 comparison: the rounding is a difference
    expect(adapterDiff(a, half, { round: 'f16' })).toBeNull();
    expect(adapterDiff(a, a, { round: 'f16' })).toMatch(/\.A\[0\] = /);
  });

  it('compares bits: -0 is not 0; and rank, alpha, targets and lengths first', () => {
    const z = mapValues(a, (x) => x);
    z.targets.values().next().value!.A[0] = 0;
    expect(
      adapterDiff(
        z,
        mapValues(z, (x) => (x === 0 ? -0 : x)),
      ),
    ).toMatch(/\.A\[0\] = 0, wrote 0$/);
    expect(adapterDiff(a, { ...a, alpha: a.alpha + 1 })).toBe(`rank/alpha 4/${a.alpha + 1}, wrote 4/${a.alpha}`);
    const fewer = { ...a, targets: new Map([...a.targets].slice(1)) };
    expect(adapterDiff(a, fewer)).toBe(`${fewer.targets.size} targets, wrote ${a.targets.size}`);
    const [k0, p0] = [...a.targets][0]!;
    const short = { ...a, targets: new Map([...a.targets, [k0, { ...p0, A: p0.A.subarray(1) }]]) };
    expect(adapterDiff(a, short)).toBe(`${k0}.A: ${p0.A.length - 1} values, wrote ${p0.A.length}`);
  });

  it('refuses an all-zero adapter by name', () => {
    const zero = mapValues(a, () => 0);
    expect(allZero(zero)).toBe(true);
    expect(allZero(a)).toBe(false);
    expect(() => checkWritable(zero, '/out/x.gguf')).toThrow(
      '/out/x.gguf: refusing to export an adapter whose every ΔW is zero',
    );
  });
});
