// PEFT folders of seeded random adapters that fit the tiny fixture bundle (hidden 64, 2 layers).
import { join } from 'node:path';
import { writePeftDir } from '../../../main/adapters/peft-dir';
import type { Adapter } from '../../../main/adapters/types';
import { APP_ROOT } from '../../../main/paths';
import { randomAdapter, type Shape } from '../../unit/adapters/builders';

export const FIXTURE_BUNDLE = join(APP_ROOT, 'tests', 'fixtures', 'bundle-tiny');

const DIMS: Record<string, [number, number]> = {
  q: [64, 64],
  k: [64, 32],
  v: [64, 32],
  o: [64, 64],
  gate: [64, 128],
  up: [64, 128],
  down: [128, 64],
};

/** Every LoRA target of the fixture bundle. */
export const FIXTURE_SHAPES: Shape[] = [0, 1].flatMap((layer) =>
  Object.entries(DIMS).map(([module, [dIn, dOut]]) => ({ layer, module, dIn, dOut })),
);

export interface FixtureOptions {
  rank?: number;
  alpha?: number;
  /** factor scale: 0.1 keeps ΔW entries small, 1 changes a random model's greedy tokens */
  scale?: number;
  shapes?: Shape[];
}

export function fixtureAdapter(
  seed: number,
  { rank = 4, alpha = 8, scale = 0.1, shapes = FIXTURE_SHAPES }: FixtureOptions = {},
): Adapter {
  const a = randomAdapter({ seed, rank, alpha, shapes });
  const targets = new Map(
    [...a.targets].map(([k, p]) => [k, { ...p, A: p.A.map((v) => v * scale), B: p.B.map((v) => v * scale) }]),
  );
  return { ...a, targets };
}

export async function writeFixturePeft(dir: string, seed: number, opts: FixtureOptions = {}): Promise<Adapter> {
  const adapter = fixtureAdapter(seed, opts);
  await writePeftDir(dir, adapter, {});
  return adapter;
}
