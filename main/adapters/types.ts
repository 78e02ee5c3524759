// Adapter shapes (docs/design.md §1): for one (layer, module), ΔW = (α/r)·A·B with A d_in×r, B r×d_out,
// both row-major. PEFT stores A as r×d_in and B as d_out×r; the transpose happens on I/O, not here.

/** `${layer}.${module}`; the module name may itself contain dots, the layer never does. */
export type TargetKey = `${number}.${string}`;

export interface LoraPair {
  readonly dIn: number;
  readonly dOut: number;
  /** row-major d_in × r */
  readonly A: Float32Array;
  /** row-major r × d_out */
  readonly B: Float32Array;
}

/** Every function in main/adapters returns fresh arrays and never writes into its inputs. */
export interface Adapter {
  readonly rank: number;
  readonly alpha: number;
  readonly targets: ReadonlyMap<TargetKey, LoraPair>;
}

export function targetKey(layer: number, module: string): TargetKey {
  return `${layer}.${module}`;
}

export function parseTargetKey(key: string): { layer: number; module: string } {
  const dot = key.indexOf('.');
  return { layer: dot < 0 ? NaN : Number(key.slice(0, dot)), module: dot < 0 ? key : key.slice(dot + 1) };
}

/** α/r; a rank-0 adapter contributes nothing, so its scale is 0 rather than 0/0. */
export function scaleOf(adapter: Pick<Adapter, 'rank' | 'alpha'>): number {
  return adapter.rank === 0 ? 0 : adapter.alpha / adapter.rank;
}
