// The layered train step's parts that need no graph: Adam and the global-norm clip against values
// worked by hand from model.distill_objective.adam_update, float16 widening, weight spans read from a file,
// bundle.json's layered entry, and the memory estimate with its refusal.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_ROOT } from '../../../main/paths';
import {
  checkDistillFits,
  estimateDistillMemory,
  headRows,
  keepPlan,
  memoryRefusal,
} from '../../../main/engine/distill-memory';
import { parseManifest } from '../../../main/engine/manifest';
import { bucketFor, stepBuckets, stepRows } from '../../../main/engine/train-step';
import { adamUpdate, clipScale, halfToFloat32, WeightReader } from '../../../main/engine/train-layered';

const CFG = { beta1: 0.9, beta2: 0.999, eps: 1e-8, maxNorm: 1 };
const TRAIN = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const tmp = mkdtempSync(join(tmpdir(), 'pskills-layered-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const f32 = (xs: number[]) => Float32Array.from(xs);

describe('clip and Adam (model.distill_objective.adam_update)', () => {
  it('clip: 1 below max_norm, else max_norm / (‖g‖ + 1e-6) over every gradient together', () => {
    expect(clipScale([f32([0.3]), f32([0.4])], 1)).toBe(1);
    // ‖(3, 4, 0)‖ = 5 across two arrays
    expect(clipScale([f32([3, 0]), f32([4])], 1)).toBeCloseTo(1 / (5 + 1e-6), 12);
    expect(clipScale([f32([3, 0]), f32([4])], 2)).toBeCloseTo(2 / (5 + 1e-6), 12);
  });

  it('step 1 from zero moments moves each factor by lr · g / (|g| + eps)', () => {
    const [out] = adamUpdate(
      [{ p: f32([1, -2, 0.5]), g: f32([0.5, -0.25, 0]), m: f32([0, 0, 0]), v: f32([0, 0, 0]) }],
      1,
      0.1,
      CFG,
    );
    // m = 0.1 g, v = 0.001 g²; m̂ = g, v̂ = g²
    expect(Array.from(out!.m)).toEqual(Array.from(f32([0.05, -0.025, 0])));
    expect(Array.from(out!.v)).toEqual(Array.from(f32([0.00025, 0.0000625, 0])));
    expect(out!.p[0]).toBeCloseTo(1 - (0.1 * 0.5) / (0.5 + 1e-8), 6);
    expect(out!.p[1]).toBeCloseTo(-2 + (0.1 * 0.25) / (0.25 + 1e-8), 6);
    expect(out!.p[2]).toBe(0.5); // no gradient, no move (no weight decay)
  });

  it('step 2 with moments and a clipped gradient, worked by hand', () => {
    // g = (3, 4): ‖g‖ = 5 → scaled (0.6, 0.8)·5/(5+1e-6); m₀ = (0.1, −0.2), v₀ = (0.01, 0.02)
    const [out] = adamUpdate(
      [{ p: f32([0.2, 0.4]), g: f32([3, 4]), m: f32([0.1, -0.2]), v: f32([0.01, 0.02]) }],
      2,
      0.01,
      CFG,
    );
    const s = 1 / (5 + 1e-6);
    const g = [3 * s, 4 * s];
    const m = [0.9 * 0.1 + 0.1 * g[0]!, 0.9 * -0.2 + 0.1 * g[1]!];
    const v = [0.999 * 0.01 + 0.001 * g[0]! ** 2, 0.999 * 0.02 + 0.001 * g[1]! ** 2];
    const c1 = 1 - 0.9 ** 2;
    const c2 = 1 - 0.999 ** 2;
    // m = (0.15, −0.1), v ≈ (0.01035, 0.02062), m̂ = (0.78947, −0.52632), √v̂ ≈ (2.27543, 3.21172)
    expect(m[0]).toBeCloseTo(0.15, 6);
    expect(m[1]).toBeCloseTo(-0.1, 6);
    const p = [
      0.2 - (0.01 * (m[0]! / c1)) / (Math.sqrt(v[0]! / c2) + 1e-8),
      0.4 - (0.01 * (m[1]! / c1)) / (Math.sqrt(v[1]! / c2) + 1e-8),
    ];
    expect(p[0]).toBeCloseTo(0.2 - 0.01 * (0.78947 / 2.27543), 6); // 0.1965304
    expect(p[1]).toBeCloseTo(0.4 + 0.01 * (0.52632 / 3.21172), 6); // 0.4016387
    for (let i = 0; i < 2; i++) {
      expect(out!.m[i]).toBeCloseTo(m[i]!, 7);
      expect(out!.v[i]).toBeCloseTo(v[i]!, 8);
      expect(out!.p[i]).toBeCloseTo(p[i]!, 7);
    }
  });

  it('leaves its inputs as they were', () => {
    const x = { p: f32([1]), g: f32([1]), m: f32([0]), v: f32([0]) };
    adamUpdate([x], 1, 0.1, CFG);
    expect([x.p[0], x.m[0], x.v[0]]).toEqual([1, 0, 0]);
  });
});

describe('weights by span', () => {
  it('float16 bits widen exactly', () => {
    const bits = Uint16Array.from([0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x3555, 0x8000]);
    const got = Array.from(halfToFloat32(bits));
    expect(got.slice(0, 5)).toEqual([1, -2, 65504, 2 ** -24, Infinity]);
    expect(got[5]).toBeCloseTo(0.333251953125, 12);
    expect(Object.is(got[6], -0)).toBe(true);
  });

  it('reads spans into buffers reused per set (float16 widened or as is), rows by id, and names a span past the end', () => {
    const half = Uint16Array.from([0x3c00, 0x4000, 0x4200, 0x4400, 0xbc00, 0x0000]); // 1 2 3 4 −1 0
    const floats = Float32Array.from([5, 6, 7, 8]);
    const file = Buffer.concat([Buffer.from([9, 9, 9, 9]), Buffer.from(half.buffer), Buffer.from(floats.buffer)]);
    writeFileSync(join(tmp, 'w.data'), file);
    const reader = new WeightReader(tmp);
    const span = { file: 'w.data', offset: 4, length: 12, dtype: 'float16' as const, shape: [2, 3] };
    const wide = reader.tensors('a', { w: span }, { w: 'float32' }, 'x').w!;
    expect(wide.type).toBe('float32');
    expect(wide.dims).toEqual([2, 3]);
    expect(Array.from(wide.data as Float32Array)).toEqual([1, 2, 3, 4, -1, 0]);
    const raw = reader.tensors('b', { w: span }, { w: 'float16' }, 'x').w!;
    expect(Array.from(raw.data as Uint16Array)).toEqual(Array.from(half));
    // One buffer per set and name: another span of the same size is read into it.
    const f0 = { file: 'w.data', offset: 16, length: 8, dtype: 'float32' as const, shape: [2] };
    const t0 = reader.tensors('c', { f: f0 }, {}, 'l0').f!;
    expect(Array.from(t0.data as Float32Array)).toEqual([5, 6]);
    const t1 = reader.tensors('c', { f: { ...f0, offset: 24 } }, {}, 'l1').f!;
    expect(t1).toBe(t0);
    expect(Array.from(t1.data as Float32Array)).toEqual([7, 8]);
    expect(reader.bytes).toBe(12 + 24 + 12 + 8);
    // Embedding rows by id: float32 rows of [2, 2], float16 rows widened.
    expect(Array.from(reader.rows({ ...f0, length: 16, shape: [2, 2] }, BigInt64Array.of(1n, 0n, 1n), 'e'))).toEqual([
      7, 8, 5, 6, 7, 8,
    ]);
    expect(Array.from(reader.rows(span, BigInt64Array.of(1n), 'e'))).toEqual([4, -1, 0]);
    expect(() => reader.rows(span, BigInt64Array.of(2n), 'e')).toThrow(
      /token id 2 at 0 is outside the vocabulary \(2\)/,
    );
    expect(() => reader.tensors('d', { x: { ...f0, offset: 28 } }, {}, 'train_step.weights.head')).toThrow(
      /^train_step\.weights\.head\.x: w\.data ends before 36 bytes/,
    );
    expect(() => reader.tensors('c', { f: { ...f0, length: 4, shape: [1] } }, {}, 'l2')).toThrow(
      /l2\.f: 4 bytes, but the same weight of another layer has 8/,
    );
    expect(() => reader.tensors('e', { y: { ...span, dtype: 'float32', length: 24 } }, { y: 'float16' }, 'y')).toThrow(
      /takes float16/,
    );
    reader.release();
    expect(reader.bytes).toBe(0);
  });

  it('exclusive: one caller at a time, in order, a failure does not stop the next', async () => {
    const reader = new WeightReader(tmp);
    const log: string[] = [];
    const job = (n: string, ms: number, fail = false) =>
      reader.exclusive(async () => {
        log.push(`${n}<`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`>${n}`);
        if (fail) throw new Error(n);
        return n;
      });
    const got = await Promise.allSettled([job('a', 20), job('b', 1, true), job('c', 1)]);
    expect(log).toEqual(['a<', '>a', 'b<', '>b', 'c<', '>c']);
    expect(got.map((g) => g.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});

/** The tiny train fixture's bundle.json turned into a layered entry over spans of its lm.onnx. */
function layeredJson() {
  const m = JSON.parse(readFileSync(join(TRAIN, 'bundle.json'), 'utf8'));
  const span = (length: number, shape: number[]) => ({ file: 'lm.onnx', offset: 0, length, dtype: 'float32', shape });
  m.train_step.kind = 'layered';
  m.train_step.buckets = [{ batch: 2, length: 16, layer: 'lm.onnx', layer_vjp: 'lm.onnx', head: 'lm.onnx' }];
  m.train_step.weights = {
    embed: span(384 * 64 * 4, [384, 64]),
    head: { 'norm.weight': span(64 * 4, [64]) },
    layers: [{ 'q.weight': span(64 * 64 * 4, [64, 64]) }, { 'q.weight': span(64 * 64 * 4, [64, 64]) }],
  };
  return m;
}

describe('rows a step', () => {
  it("the smallest batch: its buckets only, shortest that holds the tokens (a bench's larger ones unused)", () => {
    const m = parseManifest(layeredJson());
    const b = (batch: number, length: number) => ({
      batch,
      length,
      layer: 'lm.onnx',
      layer_vjp: 'lm.onnx',
      head: 'lm.onnx',
    });
    m.train_step!.buckets.splice(0, 1, b(8, 128), b(4, 128), b(4, 64));
    expect(stepRows(m)).toBe(4);
    expect(stepBuckets(m).map((x) => x.length)).toEqual([64, 128]);
    expect(bucketFor(m, 64)).toMatchObject({ batch: 4, length: 64 });
    expect(bucketFor(m, 100)).toMatchObject({ batch: 4, length: 128 });
    expect(bucketFor(m, 129)).toBeNull();
  });
});

describe("bundle.json's layered train step", () => {
  it('reads a layered entry; absent kind is whole', () => {
    const m = parseManifest(layeredJson());
    expect(m.train_step!.kind).toBe('layered');
    expect(m.train_step!.weights!.layers).toHaveLength(2);
    const whole = parseManifest(JSON.parse(readFileSync(join(TRAIN, 'bundle.json'), 'utf8')));
    expect(whole.train_step!.kind).toBeUndefined();
  });

  it('says what is wrong, naming the field', () => {
    const edit = (f: (m: ReturnType<typeof layeredJson>) => void) => {
      const m = layeredJson();
      f(m);
      return () => parseManifest(m);
    };
    expect(edit((m) => delete m.train_step.buckets[0].layer_vjp)).toThrow(
      /train_step\.buckets\.0\.layer_vjp: required: a layered train step's bucket names its layer_vjp graph/,
    );
    expect(edit((m) => delete m.train_step.weights)).toThrow(/train_step\.weights: required/);
    expect(edit((m) => m.train_step.weights.layers.pop())).toThrow(
      /train_step\.weights\.layers: 1 layers, but architecture\.layers is 2/,
    );
    expect(edit((m) => (m.train_step.weights.head['norm.weight'].dtype = 'float16'))).toThrow(
      /train_step\.weights\.head\.norm\.weight\.length: 256 bytes, but float16 \[64\] is 128 bytes/,
    );
    expect(edit((m) => (m.train_step.weights.embed.file = 'nope.data'))).toThrow(
      /train_step\.weights\.embed\.file: nope\.data is not listed in files/,
    );
    expect(edit((m) => (m.train_step.weights.layers[1]['q.weight'].offset = 10 ** 9))).toThrow(
      /train_step\.weights\.layers\.1\.q\.weight\.offset: 1000000000 \+ 16384 bytes runs past the end of lm\.onnx/,
    );
    expect(edit((m) => (m.train_step.buckets[0].head = 'missing.onnx'))).toThrow(
      /train_step\.buckets\.0\.head: missing\.onnx is not listed in files/,
    );
    expect(edit((m) => (m.train_step.weights.layers[0]['q.weight'].dtype = 'bfloat16'))).toThrow(
      /train_step\.weights\.layers\.0\.q\.weight\.dtype/,
    );
    expect(
      edit((m) => {
        delete m.train_step.kind;
      }),
    ).toThrow(/train_step\.buckets\.0\.file: required: a whole train step's bucket names its file graph/);
  });
});

describe('memory before a run', () => {
  it("layered: two layers' and the head's weights, one layer, the kept inputs, the head; refused naming both figures", () => {
    const m = parseManifest(layeredJson());
    const bucket = m.train_step!.buckets[0]!;
    const e = estimateDistillMemory(m, bucket, 4, 0); // a budget that keeps nothing beyond the inputs
    expect(e.kind).toBe('layered');
    // two layers' buffers (the one running, the next read meanwhile) and the head's; the embedding by rows
    expect(e.weights).toBe(2 * 64 * 64 * 4 + 64 * 4);
    expect(e.kept).toBe(2 * 2 * 16 * 64 * 4);
    expect(e.head).toBe(2 * 5 * 384 * 4 * 3 * 2); // ×2: ORT's arena (calibrated on SmolLM2-135M)
    // a large vocabulary's head takes its answer rows in parts: at most headRows at once
    expect(headRows(151936)).toBe(110);
    const big = parseManifest({ ...layeredJson(), architecture: { ...layeredJson().architecture } });
    expect(estimateDistillMemory(big, { ...bucket, batch: 64, length: 16 }, 15).head).toBe(
      Math.min(64 * 16, headRows(384)) * 384 * 4 * 3 * 2,
    );
    expect(e.activations).toBe(2 * 16 * (12 * 64 + 4 * 2 * 16 + 6 * 128 + 3 * 4 * 16) * 4 * 2);
    expect(e.bytes).toBeGreaterThan(e.weights + e.activations + e.kept + e.head);
    expect(memoryRefusal(e, e.bytes)).toBeNull();
    const why = memoryRefusal(e, 2 ** 28);
    expect(why).toMatch(
      /^this distillation needs about 0\.5 GiB of memory \(two layers' and the head's weights 0\.0 GiB, one layer's activations/,
    );
    expect(why).toMatch(/and this machine has 0\.3 GiB free; nothing was started/);
    expect(() => checkDistillFits(m, bucket, 4, 1024)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it("keepPlan: the budget keeps the top layers' saved.* first; the estimate counts them and two layers' weights", () => {
    const m = parseManifest(layeredJson());
    const layerBytes = 64 * 64 * 4;
    const bucket = { ...m.train_step!.buckets[0]!, layer_bwd: 'lm.onnx', saved_bytes: 1000 };
    expect(keepPlan(m, bucket, 0)).toEqual({ saved: [] });
    expect(keepPlan(m, bucket, 1999)).toEqual({ saved: [1] });
    expect(keepPlan(m, bucket)).toEqual({ saved: [1, 0] });
    // without layer_bwd (a bundle written before it) nothing is saved
    expect(keepPlan(m, m.train_step!.buckets[0]!)).toEqual({ saved: [] });
    // layers below the lowest trained one run no backward: they keep nothing
    expect(
      keepPlan(parseManifest({ ...layeredJson(), lora: { ...layeredJson().lora, layers: [1] } }), bucket).saved,
    ).toEqual([1]);
    const none = estimateDistillMemory(m, bucket, 4, 0);
    const all = estimateDistillMemory(m, bucket, 4);
    expect(all.kept - none.kept).toBe(2 * 1000);
    expect(all.weights).toBe(none.weights);
    expect(none.weights).toBeGreaterThanOrEqual(2 * layerBytes);
    expect(all.bytes - none.bytes).toBe(2 * 1000);
  });

  it('whole: every layer at once, so the same bucket needs more than layered', () => {
    const json = JSON.parse(readFileSync(join(TRAIN, 'bundle.json'), 'utf8'));
    const whole = parseManifest(json);
    const layered = parseManifest(layeredJson());
    const b = whole.train_step!.buckets[0]!;
    const w = estimateDistillMemory(whole, b, 4);
    const l = estimateDistillMemory(layered, layered.train_step!.buckets[0]!, 4, 0);
    expect(w.kind).toBe('whole');
    expect(w.activations).toBe(2 * l.activations);
    expect(w.weights).toBe(json.files['lm.onnx'].bytes + json.files['train_step-2x16.onnx'].bytes);
    expect(memoryRefusal(w, 0)).toMatch(/every layer's activations/);
  });
});
