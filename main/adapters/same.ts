// The read-back checks every adapter export runs before renaming its files into place (PEFT folders,
// GGUF LoRA files, Ollama folders): what was meant against what the written bytes decode to.
import { fromHalfBits, toHalfBits } from './half';
import type { Adapter } from './types';

/** True when every target's ΔW = B·A is zero (an export of it would change nothing). */
export const allZero = (a: Adapter): boolean =>
  [...a.targets.values()].every((p) => p.A.every((v) => v === 0) || p.B.every((v) => v === 0));

/** Refuses an adapter whose every ΔW is zero, naming `where`. */
export function checkWritable(adapter: Adapter, where: string): void {
  if (adapter.rank === 0 || allZero(adapter))
    throw new Error(`${where}: refusing to export an adapter whose every ΔW is zero`);
}

const toF16 = (x: number) => fromHalfBits(toHalfBits(x));

/**
 * The first difference between the adapter `meant` and the one read `back`, or null when they are the
 * same: rank, alpha, target set, then every value bit for bit (Object.is: -0 ≠ 0, NaN = NaN). With
 * `round: 'f16'` each meant value is first rounded to float16 as the writer stored it; else float32.
 */
export function adapterDiff(meant: Adapter, back: Adapter, opts: { round?: 'f32' | 'f16' } = {}): string | null {
  const q = opts.round === 'f16' ? toF16 : Math.fround;
  if (meant.rank !== back.rank || meant.alpha !== back.alpha)
    return `rank/alpha ${back.rank}/${back.alpha}, wrote ${meant.rank}/${meant.alpha}`;
  if (meant.targets.size !== back.targets.size) return `${back.targets.size} targets, wrote ${meant.targets.size}`;
  for (const [key, p] of meant.targets) {
    const b = back.targets.get(key);
    if (!b) return `${key} missing`;
    for (const [n, x, y] of [
      ['A', p.A, b.A],
      ['B', p.B, b.B],
    ] as const) {
      if (x.length !== y.length) return `${key}.${n}: ${y.length} values, wrote ${x.length}`;
      for (let i = 0; i < x.length; i++)
        if (!Object.is(q(x[i]!), y[i]!)) return `${key}.${n}[${i}] = ${y[i]}, wrote ${q(x[i]!)}`;
    }
  }
  return null;
}
