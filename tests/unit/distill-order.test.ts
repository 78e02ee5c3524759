// The distillation's batch order and zero-init draws are the same functions in the engine and the
// Python distiller (docs/distill.md "Batch order and init"). These golden values are also asserted by
// training/tests/test_distill_order.py: a change on one side fails one of the two.
import { describe, expect, it } from 'vitest';
import { batchOrder } from '../../main/engine/distill-order';
import { seededRng } from '../../main/engine/sampler';

describe('distillation order and init draws (shared with Python)', () => {
  it('batchOrder: a seeded shuffle per pass, rows popped from its end', () => {
    expect(batchOrder(5, 3, 4, 0)).toEqual([
      [1, 4, 3],
      [2, 0, 0],
      [1, 2, 3],
      [4, 0, 2],
    ]);
    expect(batchOrder(10, 8, 3, 7)).toEqual([
      [2, 0, 9, 6, 4, 3, 5, 7],
      [1, 8, 0, 3, 1, 8, 2, 4],
      [9, 5, 6, 7, 7, 6, 0, 9],
    ]);
    // fewer rows than the batch: every row once per step
    expect(batchOrder(2, 8, 2, 0).map((b) => [...b].sort())).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  it('seededRng (mulberry32): the zero init draws', () => {
    const r = seededRng(0);
    expect([r(), r(), r(), r(), r()]).toEqual([
      0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111, 0.46732782293111086,
    ]);
    const q = seededRng(42);
    q();
    q();
    expect([q(), q(), q()]).toEqual([0.8524657934904099, 0.6697340414393693, 0.17481389874592423]);
  });
});
