import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Adapter, LoraPair, TargetKey } from '../../../main/adapters/types';
import {
  applyScale,
  checkAdapterFits,
  engineAdapter,
  foldAdapter,
  LoraFeedCache,
  loraFeeds,
} from '../../../main/engine/adapter';
import { engineFromWire, engineToWire } from '../../../main/engine/adapter-wire';
import { parseManifest } from '../../../main/engine/manifest';
import { FIXTURE_DIR } from '../../int/engine/fixture';

const json = JSON.parse(readFileSync(join(FIXTURE_DIR, 'bundle.json'), 'utf8'));
const manifest = parseManifest(json);
/** The same bundle as written before LoRA groups: one lora.{i}.{module} pair per target. */
const perTarget = parseManifest({
  ...json,
  format: 'pskills.bundle/1',
  lora: { ...json.lora, groups: undefined },
  io: {
    ...json.io,
    lm: {
      ...json.io.lm,
      inputs: json.io.lm.inputs
        .filter((t: string) => t !== 'logits_to_keep')
        .map((t: string) => t.replace('{group}', '{module}')),
    },
  },
});

/** Entries numbered from `start` so every value says where it came from. */
const seq = (n: number, start: number) => Float32Array.from({ length: n }, (_, i) => start + i);
const pair = (dIn: number, dOut: number, r: number, start: number): LoraPair => ({
  dIn,
  dOut,
  A: seq(dIn * r, start),
  B: seq(r * dOut, -start),
});

describe('loraFeeds (per target)', () => {
  it('zero-pads each row to the batch rank; no adapter and rank 0 rows are all zero', () => {
    const r2 = engineAdapter(2, new Map<TargetKey, LoraPair>([['1.k', pair(64, 32, 2, 1000)]]));
    const r3 = engineAdapter(3, new Map<TargetKey, LoraPair>([['1.k', pair(64, 32, 3, 5000)]]));
    const empty = engineAdapter(0, new Map());
    const feeds = loraFeeds(perTarget, [r2, null, r3, empty]);
    const A = feeds['lora.1.k.A']!;
    const B = feeds['lora.1.k.B']!;
    expect(A.dims).toEqual([4, 64, 3]);
    expect(B.dims).toEqual([4, 3, 32]);
    const a = A.data as Float32Array;
    const b = B.data as Float32Array;
    const at = (row: number, i: number, j: number) => a[(row * 64 + i) * 3 + j];
    expect([at(0, 5, 0), at(0, 5, 1), at(0, 5, 2)]).toEqual([1010, 1011, 0]); // A[5, :] of the rank-2 row, then a zero column
    expect([at(2, 5, 0), at(2, 5, 2)]).toEqual([5015, 5017]);
    expect(b.subarray(0, 64)).toEqual(seq(64, -1000)); // B rows 0..1 of row 0 …
    expect(b.subarray(64, 96).every((v) => v === 0)).toBe(true); // … and a zero third row
    for (const row of [1, 3]) {
      expect(a.subarray(row * 192, (row + 1) * 192).every((v) => v === 0)).toBe(true);
      expect(b.subarray(row * 96, (row + 1) * 96).every((v) => v === 0)).toBe(true);
    }
    expect((feeds['lora.0.q.A']!.data as Float32Array).every((v) => v === 0)).toBe(true); // targets an adapter lacks
    expect(Object.keys(feeds)).toHaveLength(2 * 2 * 7);
  });

  it('a batch without adapters has rank 0', () => {
    const feeds = loraFeeds(manifest, [null, null]);
    expect(feeds['lora.0.down.A']!.dims).toEqual([2, 128, 0]);
    expect(feeds['lora.0.down.B']!.dims).toEqual([2, 0, 64]);
    expect(feeds['lora.0.qkv.B']!.dims).toEqual([2, 0, 128]);
  });
});

describe('loraFeeds (groups)', () => {
  it('packs q, k and v into qkv: member j in rank slots j·R…, its B rows at its column offset', () => {
    const r2 = engineAdapter(
      2,
      new Map<TargetKey, LoraPair>([
        ['1.q', pair(64, 64, 2, 3000)],
        ['1.k', pair(64, 32, 2, 1000)],
      ]),
    );
    const r3 = engineAdapter(3, new Map<TargetKey, LoraPair>([['1.v', pair(64, 32, 3, 5000)]]));
    const feeds = loraFeeds(manifest, [r2, null, r3]);
    expect(Object.keys(feeds)).toHaveLength(2 * 2 * 5); // qkv, o, gate, up, down per layer
    const A = feeds['lora.1.qkv.A']!;
    const B = feeds['lora.1.qkv.B']!;
    expect(A.dims).toEqual([3, 64, 9]); // R = 3, three members
    expect(B.dims).toEqual([3, 9, 128]); // q 0…63, k 64…95, v 96…127
    const a = A.data as Float32Array;
    const b = B.data as Float32Array;
    const slots = (row: number, i: number) => Array.from(a.subarray((row * 64 + i) * 9, (row * 64 + i + 1) * 9));
    expect(slots(0, 5)).toEqual([3010, 3011, 0, 1010, 1011, 0, 0, 0, 0]);
    expect(slots(1, 5)).toEqual(Array(9).fill(0));
    expect(slots(2, 5)).toEqual([0, 0, 0, 0, 0, 0, 5015, 5016, 5017]);
    const bRow = (row: number, slot: number) => b.subarray((row * 9 + slot) * 128, (row * 9 + slot + 1) * 128);
    expect(bRow(0, 0)).toEqual(Float32Array.from([...seq(64, -3000), ...Array(64).fill(0)]));
    expect(bRow(0, 4)).toEqual(Float32Array.from([...Array(64).fill(0), ...seq(32, -968), ...Array(32).fill(0)]));
    expect(bRow(0, 2).every((v) => v === 0)).toBe(true); // rank slot past the row's r
    expect(bRow(2, 8)).toEqual(Float32Array.from([...Array(96).fill(0), ...seq(32, -4936)]));
    expect((feeds['lora.0.qkv.A']!.data as Float32Array).every((v) => v === 0)).toBe(true); // layer 0: none
  });
});

describe('loraFeeds of a single row', () => {
  it("wraps the adapter's own arrays (no copy); targets it lacks are zeros of its rank", () => {
    const p = pair(64, 32, 2, 1000);
    const feeds = loraFeeds(perTarget, [engineAdapter(2, new Map<TargetKey, LoraPair>([['1.k', p]]))]);
    expect(feeds['lora.1.k.A']!.data).toBe(p.A);
    expect(feeds['lora.1.k.B']!.data).toBe(p.B);
    expect(feeds['lora.1.k.A']!.dims).toEqual([1, 64, 2]);
    const q = feeds['lora.0.q.A']!;
    expect(q.dims).toEqual([1, 64, 2]);
    expect((q.data as Float32Array).every((v) => v === 0)).toBe(true);
  });
});

describe('LoraFeedCache', () => {
  const r2 = () => engineAdapter(2, new Map<TargetKey, LoraPair>([['1.k', pair(64, 32, 2, 1000)]]));

  it('hands out the same feeds for the same adapter, also after switching away and back', () => {
    const cache = new LoraFeedCache(manifest);
    const [a, b] = [r2(), r2()];
    const fa = cache.feeds([a]);
    const fb = cache.feeds([b]);
    expect(fb).not.toBe(fa);
    expect(cache.feeds([a])).toBe(fa);
    expect(cache.feeds([b])).toBe(fb);
    expect(Object.isFrozen(fa)).toBe(true);
  });

  it('keeps the no-adapter feeds per batch size (null and rank 0 alike)', () => {
    const cache = new LoraFeedCache(manifest);
    const one = cache.feeds([null]);
    expect(cache.feeds([engineAdapter(0, new Map())])).toBe(one);
    const two = cache.feeds([null, null]);
    expect(two['lora.0.qkv.A']!.dims).toEqual([2, 64, 0]);
    expect(cache.feeds([null, null])).toBe(two);
  });

  it('reuses the last multi-row pack only for the same adapters in the same rows', () => {
    const cache = new LoraFeedCache(manifest);
    const [a, b] = [r2(), r2()];
    const ab = cache.feeds([a, b]);
    expect(cache.feeds([a, b])).toBe(ab);
    const ba = cache.feeds([b, a]);
    expect(ba).not.toBe(ab);
    expect(cache.feeds([b, a])).toBe(ba);
  });

  it('refuses a bad adapter every time, naming the row', () => {
    const cache = new LoraFeedCache(manifest);
    const bad = engineAdapter(2, new Map([['0.up', pair(128, 128, 2, 0)]]));
    for (let i = 0; i < 2; i++)
      expect(() => cache.feeds([null, bad])).toThrow('adapter of row 1, layer 0, module "up": d_in 128');
  });
});

describe('foldAdapter', () => {
  it('carries α/r beside the factors without copying them; applyScale and the wire multiply it into A once', () => {
    const p = pair(64, 64, 2, 1);
    const adapter: Adapter = { rank: 2, alpha: 8, targets: new Map([['0.q', p]]) };
    const marked = foldAdapter(adapter);
    expect(marked.scale).toBe(4);
    expect(marked.targets.get('0.q')!.A).toBe(p.A);
    const folded = applyScale(marked);
    expect(folded.targets.get('0.q')!.A).toEqual(p.A.map((v) => 4 * v));
    expect(folded.targets.get('0.q')!.B).toEqual(p.B);
    expect(applyScale(marked)).toBe(folded); // once per adapter
    const received = engineFromWire(engineToWire(marked)).targets.get('0.q')!;
    expect(received.A).toEqual(p.A.map((v) => 4 * v));
    expect(received.B).toEqual(p.B);
    expect(p.A[0]).toBe(1); // input untouched
  });
});

describe('checkAdapterFits', () => {
  it('accepts an adapter that fits, even with missing targets', () => {
    expect(() =>
      checkAdapterFits(manifest, engineAdapter(2, new Map([['1.gate', pair(64, 128, 2, 0)]]))),
    ).not.toThrow();
  });

  it('refuses an unfolded adapter and a bad rank', () => {
    const unfolded = { rank: 2, alpha: 4, targets: new Map() } as unknown as Parameters<typeof checkAdapterFits>[1];
    expect(() => checkAdapterFits(manifest, unfolded)).toThrow('adapter: scale not folded (use foldAdapter)');
    expect(() => checkAdapterFits(manifest, engineAdapter(-1, new Map()), 2)).toThrow(
      'adapter of row 2: rank -1 is not an integer ≥ 0',
    );
  });

  it('names the first value that is not finite, wherever it is', () => {
    const withA = (A: Float32Array) => engineAdapter(3, new Map([['1.o', { ...pair(64, 64, 3, 0), A }]]));
    const A = new Float32Array(192).fill(3.4e38); // finite values whose sum is far above float32's range
    expect(() => checkAdapterFits(manifest, withA(A))).not.toThrow();
    for (const [k, v] of [
      [191, Infinity],
      [0, NaN],
      [7, -Infinity],
    ] as const) {
      const bad = A.slice();
      bad[k] = v;
      if (k === 7) bad[100] = Infinity; // +∞ and −∞ sum to NaN; the first one is named
      expect(() => checkAdapterFits(manifest, withA(bad))).toThrow(`adapter, layer 1, module "o": A[${k}] is ${v}`);
    }
  });

  it('names layer, module and dimension', () => {
    expect(() => checkAdapterFits(manifest, engineAdapter(2, new Map([['0.up', pair(128, 128, 2, 0)]])))).toThrow(
      'adapter, layer 0, module "up": d_in 128, the bundle has 64',
    );
    expect(() => checkAdapterFits(manifest, engineAdapter(3, new Map([['1.o', pair(64, 64, 2, 0)]])))).toThrow(
      'adapter, layer 1, module "o": A has 128 values, expected d_in×r = 64×3 = 192',
    );
  });
});
