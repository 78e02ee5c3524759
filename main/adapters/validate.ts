// The one validation step every algebra entry point runs first, so the pure functions after it can
// index arrays without re-checking (the split of PEFT's _check_add_weighted_adapter vs the merge).
import { parseTargetKey, type Adapter, type LoraPair } from './types';

export interface AdapterErrorWhere {
  index?: number;
  layer?: number;
  module?: string;
}

export class AdapterValidationError extends Error {
  override name = 'AdapterValidationError';
  constructor(
    readonly where: AdapterErrorWhere,
    readonly why: string,
  ) {
    super(`${describe(where)}: ${why}`);
  }
}

function describe({ index, layer, module }: AdapterErrorWhere): string {
  const parts: string[] = [];
  if (index !== undefined) parts.push(`adapter ${index}`);
  if (layer !== undefined) parts.push(`layer ${layer}`);
  if (module !== undefined) parts.push(`module "${module}"`);
  return parts.length ? parts.join(', ') : 'adapters';
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;

function checkFinite(where: AdapterErrorWhere, name: 'A' | 'B', data: Float32Array, cols: number): void {
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (!Number.isFinite(v)) {
      const at = `[${Math.floor(i / cols)}, ${i % cols}]`;
      throw new AdapterValidationError(where, `${name}${at} is ${v}, expected a finite number`);
    }
  }
}

function checkPair(where: AdapterErrorWhere, rank: number, pair: LoraPair): void {
  for (const dim of ['dIn', 'dOut'] as const) {
    if (!isCount(pair[dim]) || pair[dim] === 0)
      throw new AdapterValidationError(where, `${dim} is ${String(pair[dim])}, expected a positive integer`);
  }
  const shapes = [
    ['A', pair.A, pair.dIn, rank, 'd_in×r'],
    ['B', pair.B, rank, pair.dOut, 'r×d_out'],
  ] as const;
  for (const [name, data, rows, cols, label] of shapes) {
    if (!(data instanceof Float32Array)) throw new AdapterValidationError(where, `${name} is not a Float32Array`);
    if (data.length !== rows * cols) {
      throw new AdapterValidationError(
        where,
        `${name} has ${data.length} values, expected ${label} = ${rows}×${cols} = ${rows * cols}`,
      );
    }
    checkFinite(where, name, data, cols);
  }
}

/** Shapes and values of one adapter. */
export function validateAdapter(adapter: Adapter, index = 0): void {
  if (!isCount(adapter.rank))
    throw new AdapterValidationError({ index }, `rank is ${String(adapter.rank)}, expected an integer ≥ 0`);
  if (!Number.isFinite(adapter.alpha))
    throw new AdapterValidationError({ index }, `alpha is ${String(adapter.alpha)}, expected a finite number`);
  if (!(adapter.targets instanceof Map) || adapter.targets.size === 0)
    throw new AdapterValidationError({ index }, 'has no targets');
  for (const [key, pair] of adapter.targets) {
    const { layer, module } = parseTargetKey(key);
    if (!isCount(layer) || module === '')
      throw new AdapterValidationError({ index }, `target key "${key}" is not "<layer>.<module>"`);
    checkPair({ index, layer, module }, adapter.rank, pair);
  }
}

/**
 * Every adapter valid, all with the target set and dims of adapter 0, and (when given) one finite
 * weight per adapter. Throws AdapterValidationError naming the adapter index, layer, module, dimension.
 */
export function validateAdapters(list: readonly Adapter[], weights?: readonly number[]): void {
  if (list.length === 0) throw new AdapterValidationError({}, 'need at least one adapter');
  if (weights !== undefined) {
    if (weights.length !== list.length)
      throw new AdapterValidationError({}, `got ${weights.length} weights for ${list.length} adapters`);
    weights.forEach((w, index) => {
      if (!Number.isFinite(w))
        throw new AdapterValidationError({ index }, `weight is ${String(w)}, expected a finite number`);
    });
  }
  list.forEach((a, i) => validateAdapter(a, i));
  const first = list[0]!.targets;
  list.forEach((adapter, index) => {
    if (index === 0) return;
    for (const [key, ref] of first) {
      const { layer, module } = parseTargetKey(key);
      const pair = adapter.targets.get(key);
      if (!pair) throw new AdapterValidationError({ index, layer, module }, 'target missing (adapter 0 has it)');
      for (const dim of ['dIn', 'dOut'] as const) {
        if (pair[dim] !== ref[dim])
          throw new AdapterValidationError(
            { index, layer, module },
            `${dim} is ${pair[dim]}, adapter 0 has ${ref[dim]}`,
          );
      }
    }
    for (const key of adapter.targets.keys()) {
      if (!first.has(key))
        throw new AdapterValidationError({ index, ...parseTargetKey(key) }, 'target not in adapter 0');
    }
  });
}
