// Validation runs before any algebra and names the adapter index, layer, module and dimension.
import { describe, expect, it } from 'vitest';
import { cat, linearBaseline } from '../../../main/adapters/merge';
import { svdMerge } from '../../../main/adapters/svd';
import { targetKey, type Adapter } from '../../../main/adapters/types';
import { AdapterValidationError, validateAdapters } from '../../../main/adapters/validate';
import { randomAdapter, withPair } from './builders';

const a = randomAdapter({ seed: 1 });
const b = randomAdapter({ seed: 2 });
const q = targetKey(0, 'q');

function errorOf(f: () => unknown): AdapterValidationError {
  try {
    f();
  } catch (err) {
    if (err instanceof AdapterValidationError) return err;
    throw err;
  }
  throw new Error('expected an AdapterValidationError');
}

describe('validateAdapters', () => {
  it('accepts adapters with the same targets and dims', () => {
    expect(() => validateAdapters([a, b], [0.5, 0.5])).not.toThrow();
  });

  it('names index, layer, module and the expected shape of a wrong-sized factor', () => {
    const bad = withPair(b, q, { A: new Float32Array(7) });
    const err = errorOf(() => validateAdapters([a, bad]));
    expect(err.where).toEqual({ index: 1, layer: 0, module: 'q' });
    expect(err.message).toBe('adapter 1, layer 0, module "q": A has 7 values, expected d_in×r = 12×4 = 48');
  });

  it('names the row and column of a non-finite value', () => {
    const B = b.targets.get(targetKey(1, 'mlp.down'))!.B.slice();
    B[1 * 12 + 5] = NaN;
    const err = errorOf(() => validateAdapters([a, withPair(b, targetKey(1, 'mlp.down'), { B })]));
    expect(err.message).toBe('adapter 1, layer 1, module "mlp.down": B[1, 5] is NaN, expected a finite number');
  });

  it('names a dimension that differs from adapter 0', () => {
    const other = randomAdapter({
      seed: 3,
      shapes: [
        { layer: 0, module: 'q', dIn: 12, dOut: 11 },
        { layer: 0, module: 'v', dIn: 12, dOut: 6 },
        { layer: 1, module: 'mlp.down', dIn: 9, dOut: 12 },
      ],
    });
    expect(errorOf(() => validateAdapters([a, other])).message).toBe(
      'adapter 1, layer 0, module "q": dOut is 11, adapter 0 has 10',
    );
  });

  it('names missing and extra targets', () => {
    const targets = new Map(b.targets);
    targets.delete(targetKey(0, 'v'));
    expect(errorOf(() => validateAdapters([a, { ...b, targets }])).message).toBe(
      'adapter 1, layer 0, module "v": target missing (adapter 0 has it)',
    );
    const extra = new Map(b.targets).set(targetKey(7, 'k'), b.targets.get(q)!);
    expect(errorOf(() => validateAdapters([a, { ...b, targets: extra }])).message).toBe(
      'adapter 1, layer 7, module "k": target not in adapter 0',
    );
  });

  it('checks the weights and the adapter-level fields', () => {
    expect(errorOf(() => validateAdapters([a, b], [1])).message).toBe('adapters: got 1 weights for 2 adapters');
    expect(errorOf(() => validateAdapters([a, b], [1, Infinity])).message).toBe(
      'adapter 1: weight is Infinity, expected a finite number',
    );
    expect(errorOf(() => validateAdapters([])).message).toBe('adapters: need at least one adapter');
    expect(errorOf(() => validateAdapters([{ ...a, rank: 2.5 }])).message).toBe(
      'adapter 0: rank is 2.5, expected an integer ≥ 0',
    );
    expect(errorOf(() => validateAdapters([{ ...a, alpha: NaN }])).message).toBe(
      'adapter 0: alpha is NaN, expected a finite number',
    );
    const badKey = { ...a, targets: new Map([['q', a.targets.get(q)!]]) } as unknown as Adapter;
    expect(errorOf(() => validateAdapters([badKey])).message).toBe(
      'adapter 0: target key "q" is not "<layer>.<module>"',
    );
    expect(errorOf(() => validateAdapters([withPair(a, q, { dIn: 0 })])).message).toBe(
      'adapter 0, layer 0, module "q": dIn is 0, expected a positive integer',
    );
  });

  it('runs first in every entry point', () => {
    const bad = withPair(b, q, { B: new Float32Array(3) });
    expect(() => cat([a, bad], [1, 1])).toThrow(AdapterValidationError);
    expect(() => svdMerge([a, bad], [1, 1], 2)).toThrow(
      /adapter 1, layer 0, module "q": B has 3 values, expected r×d_out = 4×10 = 40/,
    );
    expect(() => linearBaseline([a, randomAdapter({ seed: 4, rank: 3 })], [1, 1])).toThrow(
      "adapter 1: rank is 3, linear merge needs every rank equal to adapter 0's 4",
    );
  });
});
