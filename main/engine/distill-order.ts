// The batch order of a distillation, shared with the Python distiller (training/src/pskills_train/
// distill/student.py `batch_order`) so that both draw the same rows at every step: a 32-bit LCG and a
// Fisher–Yates shuffle per pass, defined in docs/distill.md "Batch order and init". torch's randperm
// cannot be reproduced outside torch, so neither side uses it.

/** Row indices of each step's batch: `steps` lists of min(batch, rows) indices into the rows. */
export function batchOrder(rows: number, batch: number, steps: number, seed: number): number[][] {
  let s = (seed + 1) >>> 0;
  // s ← 1664525·s + 1013904223 (mod 2³²); j = ⌊s·(i+1) / 2³²⌋ is exact in doubles (s·(i+1) < 2⁵³).
  const below = (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 4294967296) * n);
  };
  const out: number[][] = [];
  let perm: number[] = [];
  for (let step = 0; step < steps; step++) {
    const picked: number[] = [];
    while (picked.length < Math.min(batch, rows)) {
      if (perm.length === 0) {
        perm = Array.from({ length: rows }, (_, i) => i);
        for (let i = rows - 1; i > 0; i--) {
          const j = below(i + 1);
          [perm[i], perm[j]] = [perm[j]!, perm[i]!];
        }
      }
      picked.push(perm.pop()!); // from the end of the pass's permutation
    }
    out.push(picked);
  }
  return out;
}
