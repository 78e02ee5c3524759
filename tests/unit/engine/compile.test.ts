// The pure parts of compiling: the chunk rule (docs/bundle-format.md step 2) and the mean rank
// concatenation of chunk adapters (step 4), checked against dense ΔW on small shapes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkSpans, combineChunks, type ChunkFactors } from '../../../main/engine';
import { parseManifest } from '../../../main/engine/manifest';
import { seededRng } from '../../../main/engine/sampler';
import { parseSkillModel } from '../../../main/api/openai/models';
import { parseSkillRef } from '../../../main/cli/args';
import { APP_ROOT } from '../../../main/paths';

describe('chunkSpans', () => {
  it('one chunk up to the budget, then a new one every stride', () => {
    expect(chunkSpans(1, 16, 4)).toEqual([[0, 1]]);
    expect(chunkSpans(16, 16, 4)).toEqual([[0, 16]]);
    expect(chunkSpans(17, 16, 4)).toEqual([
      [0, 16],
      [12, 17],
    ]);
    expect(chunkSpans(28, 16, 4)).toEqual([
      [0, 16],
      [12, 28],
    ]);
    expect(chunkSpans(29, 16, 4)).toEqual([
      [0, 16],
      [12, 28],
      [24, 29],
    ]);
    expect(chunkSpans(45, 16, 4)).toEqual([
      [0, 16],
      [12, 28],
      [24, 40],
      [36, 45],
    ]);
  });

  it('overlap 0 tiles exactly; a tail inside the overlap makes no chunk of its own', () => {
    expect(chunkSpans(32, 16, 0)).toEqual([
      [0, 16],
      [16, 32],
    ]);
    expect(chunkSpans(33, 16, 0)).toEqual([
      [0, 16],
      [16, 32],
      [32, 33],
    ]);
    // n = stride + overlap: the second chunk would only repeat the first one's overlap
    expect(chunkSpans(16, 12, 4)).toEqual([
      [0, 12],
      [8, 16],
    ]);
    expect(chunkSpans(12, 12, 4)).toEqual([[0, 12]]);
  });

  it('covers every token, each chunk within the budget, neighbours sharing the overlap', () => {
    for (const [budget, overlap] of [
      [16, 4],
      [7, 3],
      [5, 0],
      [2, 1],
      [1, 0],
    ] as const) {
      for (let n = 1; n < 60; n++) {
        const spans = chunkSpans(n, budget, overlap);
        expect(spans[0]![0]).toBe(0);
        expect(spans.at(-1)![1]).toBe(n);
        for (const [s, e] of spans) {
          expect(e - s).toBeGreaterThan(0);
          expect(e - s).toBeLessThanOrEqual(budget);
        }
        for (let c = 1; c < spans.length; c++)
          expect(spans[c - 1]![1] - spans[c]![0]).toBe(Math.min(overlap, spans[c - 1]![1] - spans[c]![0]));
        for (let c = 1; c < spans.length; c++) expect(spans[c]![0]).toBe(c * (budget - overlap));
      }
    }
  });

  it('refuses an empty skill and impossible chunking', () => {
    expect(() => chunkSpans(0, 16, 4)).toThrow(/empty skill \(0 tokens\)/);
    expect(() => chunkSpans(5, 16, 16)).toThrow(/chunk_overlap 16 must be in 0 … token_budget − 1 \(15\)/);
    expect(() => chunkSpans(5, 0, 0)).toThrow(/token_budget 0/);
  });
});

describe('combineChunks', () => {
  const manifest = parseManifest(
    JSON.parse(readFileSync(join(APP_ROOT, 'tests/fixtures/bundle-tiny/bundle.json'), 'utf8')),
  );
  const L = manifest.lora.layers.length;
  const r = 3;
  const rng = seededRng(7);
  const chunk = (): ChunkFactors =>
    new Map(
      manifest.lora.targets.map((t) => [
        t.module,
        {
          A: Float32Array.from({ length: L * t.d_in * r }, () => rng() - 0.5),
          B: Float32Array.from({ length: L * r * t.d_out }, () => rng() - 0.5),
        },
      ]),
    );
  /** dense a·b of row-major a [m, k] and b [k, n] */
  const dense = (a: ArrayLike<number>, b: ArrayLike<number>, m: number, k: number, n: number) => {
    const out = new Float64Array(m * n);
    for (let i = 0; i < m; i++)
      for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) out[i * n + j]! += a[i * k + p]! * b[p * n + j]!;
    return out;
  };

  it("is the mean of the chunks' ΔW, rank k·r, α = rank, layer j = lora.layers[j]", () => {
    const chunks = [chunk(), chunk(), chunk()];
    const k = chunks.length;
    const out = combineChunks(manifest, chunks, r);
    expect(out.rank).toBe(k * r);
    expect(out.alpha).toBe(k * r);
    expect(out.targets.size).toBe(L * manifest.lora.targets.length);
    for (const [j, layer] of manifest.lora.layers.entries()) {
      for (const { module, d_in, d_out } of manifest.lora.targets) {
        const pair = out.targets.get(`${layer}.${module}`)!;
        expect(pair.A.length).toBe(d_in * k * r);
        expect(pair.B.length).toBe(k * r * d_out);
        const got = dense(pair.A, pair.B, d_in, k * r, d_out);
        const want = new Float64Array(d_in * d_out);
        for (const c of chunks) {
          const f = c.get(module)!;
          const d = dense(
            f.A.subarray(j * d_in * r, (j + 1) * d_in * r),
            f.B.subarray(j * r * d_out, (j + 1) * r * d_out),
            d_in,
            r,
            d_out,
          );
          d.forEach((v, i) => (want[i]! += v / k));
        }
        let worst = 0;
        got.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - want[i]!))));
        expect(worst).toBeLessThan(1e-5);
      }
    }
  });

  it("one chunk is that chunk's adapter unchanged", () => {
    const c = chunk();
    const out = combineChunks(manifest, [c], r);
    const f = c.get('q')!;
    const d = manifest.lora.targets[0]!.d_in;
    expect(out.targets.get('1.q')!.A).toEqual(f.A.subarray(d * r, 2 * d * r));
  });
});

describe('parseSkillModel', () => {
  it('reads base:<skill>@<n> and base:<skill>', () => {
    expect(parseSkillModel('base:sql-review@3')).toEqual({ name: 'sql-review', version: 3 });
    expect(parseSkillModel('base:sql-review')).toEqual({ name: 'sql-review' });
    expect(parseSkillModel('base:pkg:skill@1')).toEqual({ name: 'pkg:skill', version: 1 });
    for (const bad of ['base', 'global', 'base:', 'base:x@0', 'base:x@00', 'other:x@1', 'base:x@99999999999999999999'])
      expect(parseSkillModel(bad), bad).toBeNull();
  });

  it('splits as the CLI does: only a trailing @digits is a version', () => {
    for (const ref of ['x@1.5', 'x@', '@1', 'a@b@12', 'Git Commit Helper@3', '@scope/skill']) {
      expect(parseSkillModel(`base:${ref}`), ref).toEqual(parseSkillRef(ref));
    }
  });
});
