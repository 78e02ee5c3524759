import { describe, expect, it } from 'vitest';
import { processorsFor, repetitionPenalty, temperature, topK, topP } from '../../../main/engine/logits-processors';
import { argmax, multinomial, samplerFor, seededRng } from '../../../main/engine/sampler';

const run = (p: (l: Float32Array, c: readonly number[]) => void, values: number[], context: number[] = []) => {
  const l = Float32Array.from(values);
  p(l, context);
  return Array.from(l);
};

describe('logits processors', () => {
  it('temperature divides', () => expect(run(temperature(2), [2, -4, 1])).toEqual([1, -2, 0.5]));

  it('top-k keeps the k largest and ties with the k-th', () => {
    expect(run(topK(2), [1, 5, 3, 4])).toEqual([-Infinity, 5, -Infinity, 4]);
    expect(run(topK(2), [1, 5, 4, 4])).toEqual([-Infinity, 5, 4, 4]);
    expect(run(topK(10), [1, 2])).toEqual([1, 2]);
  });

  it('top-p keeps the most likely tokens until their mass reaches p', () => {
    const l = [Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)];
    expect(run(topP(0.7), l).map(Number.isFinite)).toEqual([true, true, false, false]);
    expect(run(topP(0.81), l).map(Number.isFinite)).toEqual([true, true, true, false]);
    expect(run(topP(0.1), l).map(Number.isFinite)).toEqual([true, false, false, false]);
  });

  it('repetition penalty shrinks seen tokens toward less likely, once per token', () => {
    expect(run(repetitionPenalty(2), [4, -4, 4], [0, 1, 1])).toEqual([2, -8, 4]);
  });

  it('greedy needs no processors; options are checked', () => {
    expect(processorsFor({})).toHaveLength(0);
    expect(processorsFor({ temperature: 0, topK: 5 })).toHaveLength(0);
    expect(processorsFor({ temperature: 0.7, topK: 5, topP: 0.9, repetitionPenalty: 1.2 })).toHaveLength(4);
    expect(() => processorsFor({ temperature: -1 })).toThrow('sampling.temperature is -1, expected ≥ 0');
    expect(() => processorsFor({ topK: 1.5 })).toThrow(/sampling\.topK/);
    expect(() => processorsFor({ topP: 1.5 })).toThrow(/sampling\.topP is 1\.5/);
  });
});

describe('samplers', () => {
  it('argmax takes the lowest index of a tie', () => expect(argmax(Float32Array.from([1, 3, 3, 2]))).toBe(1));

  it('a seed reproduces the PRNG stream; another seed does not', () => {
    const a = seededRng(42);
    const b = seededRng(42);
    const c = seededRng(43);
    const take = (r: () => number) => Array.from({ length: 5 }, r);
    const sa = take(a);
    expect(sa).toEqual(take(b));
    expect(sa).not.toEqual(take(c));
    expect(sa.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('multinomial follows the softmax and never picks a masked token', () => {
    const logits = Float32Array.from([Math.log(0.7), Math.log(0.2), Math.log(0.1), -Infinity]);
    const rng = seededRng(1);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20000; i++) counts[multinomial(logits, rng)]!++;
    expect(counts[3]).toBe(0);
    expect(counts[0]! / 20000).toBeCloseTo(0.7, 1);
    expect(counts[2]! / 20000).toBeCloseTo(0.1, 1);
  });

  it('temperature 0 is greedy', () => expect(samplerFor(0, 5)(Float32Array.from([0, 9, 1]))).toBe(1));
});
