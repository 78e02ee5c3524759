// Fused attention (docs/bundle-format.md "Attention"): a bundle made from the tiny GGUF fixture with
// `--attention fused` (onnxruntime's GroupQueryAttention; the engine keeps the cache and appends each step's
// keys and values) against the same file made with `--attention ops`, step by step through lm.forward: a
// shared prefix copied to three rows, the left-padded step after it (several tokens after a past, which the
// engine runs row by row), 80 decode steps (the cache outgrows its first buffers), a fork of one cache into
// two continuations, and an adapter on every row. Needs training/.venv.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAdapter, loadBundle, type Bundle, type EngineAdapter } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import type { StepInput } from '../../../main/engine/lm';
import { trainingPython } from '../../../main/training-venv';
import { fixtureAdapter } from '../adapters/fixture';

const hasVenv = existsSync(trainingPython());
const TOL = 1e-4;

describe.skipIf(!hasVenv)('fused attention against ONNX-op attention (needs training/.venv)', () => {
  let tmp: string;
  const bundles: Record<'ops' | 'fused', Bundle> = {} as never;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-fused-'));
    const env = { ...process.env, PYTHONPATH: join(process.cwd(), 'training', 'src') };
    const gguf = join(tmp, 'tiny.gguf');
    const made = spawnSync(trainingPython(), ['training/tests/gguf_tiny.py', '--out', gguf, '--f32'], {
      encoding: 'utf8',
      env,
    });
    expect(made.status, made.stderr).toBe(0);
    for (const attention of ['ops', 'fused'] as const) {
      const out = join(tmp, attention);
      const args = ['-m', 'pskills_train.export.from_gguf', gguf, '--out', out, '--train-step-buckets', 'none'];
      const built = spawnSync(trainingPython(), [...args, '--attention', attention], { encoding: 'utf8', env });
      expect(built.status, built.stderr).toBe(0);
      bundles[attention] = await loadBundle(out, { intraOpNumThreads: 1 });
    }
    expect(bundles.fused.manifest.io.lm.attention).toBe('fused');
    expect(bundles.ops.manifest.io.lm.attention).toBeUndefined();
  }, 600_000);
  afterAll(async () => {
    await Promise.all(Object.values(bundles).map((b) => b.dispose()));
    rmSync(tmp, { recursive: true, force: true });
  });

  type Step = Omit<StepInput, 'cache' | 'lora'>;
  const caches = { ops: null as KvCache | null, fused: null as KvCache | null };
  let worst = 0;
  /** The step on both bundles from their caches; logits of the positions whose mask is 1 compared. */
  async function both(step: Step, adapters: (EngineAdapter | null)[], from = caches) {
    const out = {} as Record<'ops' | 'fused', { logits: Float32Array; cache: KvCache }>;
    for (const k of ['ops', 'fused'] as const) {
      const b = bundles[k];
      const cache = from[k] ?? KvCache.empty(b.manifest, step.batch);
      out[k] = await b.lm.forward({ ...step, cache, lora: b.lm.loraFeeds(adapters) });
    }
    const V = bundles.ops.lm.vocab;
    const s = step.inputIds.length / step.batch;
    const t = step.attentionMask.length / step.batch;
    for (let r = 0; r < step.batch; r++)
      for (let j = 0; j < s; j++) {
        if (step.attentionMask[r * t + t - s + j] === 0) continue; // a pad's logits are never read
        for (let v = 0; v < V; v++) {
          const at = (r * s + j) * V + v;
          worst = Math.max(worst, Math.abs(out.ops.logits[at]! - out.fused.logits[at]!));
        }
      }
    return out;
  }
  const argmax = (x: Float32Array, row: number, V: number) => {
    let best = 0;
    for (let v = 1; v < V; v++) if (x[row * V + v]! > x[row * V + best]!) best = v;
    return best;
  };

  it('gives the same logits through a shared prefix, a padded batch, 80 decode steps and a fork', async () => {
    const adapters = [
      null,
      foldAdapter(fixtureAdapter(7, { scale: 0.3 })),
      foldAdapter(fixtureAdapter(8, { scale: 0.3 })),
    ];
    const prefix = [5, 9, 13, 17, 21];
    const first = await both(
      {
        batch: 1,
        inputIds: prefix,
        positionIds: prefix.map((_, i) => i),
        attentionMask: prefix.map(() => 1),
      },
      [null],
    );
    caches.ops = first.ops.cache.rows([0, 0, 0]);
    caches.fused = first.fused.cache.rows([0, 0, 0]);
    // The rows' rests right-aligned (pads first, masked), positions after the prefix: 3 rows × 4 tokens after a past.
    const rests = [
      [30, 31, 32, 33],
      [40, 41],
      [50, 51, 52],
    ];
    const masks = rests.map(() => prefix.map(() => 1));
    const inputIds: number[] = [];
    const positionIds: number[] = [];
    rests.forEach((rest, r) => {
      for (let j = rest.length; j < 4; j++) {
        inputIds.push(0);
        positionIds.push(0);
        masks[r]!.push(0);
      }
      rest.forEach((id, j) => {
        inputIds.push(id);
        positionIds.push(prefix.length + j);
        masks[r]!.push(1);
      });
    });
    let out = await both({ batch: 3, inputIds, positionIds, attentionMask: masks.flat() }, adapters);
    const V = bundles.ops.lm.vocab;
    const pos = rests.map((rest) => prefix.length + rest.length);
    let last = [0, 1, 2].map((r) => argmax(out.ops.logits, r * 4 + 3, V));
    let forkAt: { ops: KvCache; fused: KvCache } | null = null;
    for (let step = 0; step < 80; step++) {
      caches.ops = out.ops.cache;
      caches.fused = out.fused.cache;
      if (step === 40) forkAt = { ...caches } as { ops: KvCache; fused: KvCache };
      masks.forEach((m) => m.push(1));
      out = await both(
        { batch: 3, inputIds: last, positionIds: pos.map((p) => p + step), attentionMask: masks.flat() },
        adapters,
      );
      last = [0, 1, 2].map((r) => argmax(out.ops.logits, r, V));
    }
    expect(out.fused.cache.length).toBe(prefix.length + 4 + 80);
    // The fork: step 40's caches again, with other tokens; the cache the loop went on with is not disturbed.
    const forkMask = masks.map((m) => m.slice(0, prefix.length + 4 + 41));
    const pos40 = pos.map((p) => p + 40);
    await both(
      { batch: 3, inputIds: [60, 61, 62], positionIds: pos40, attentionMask: forkMask.flat() },
      adapters,
      forkAt!,
    );
    masks.forEach((m) => m.push(1));
    await both(
      { batch: 3, inputIds: last, positionIds: pos.map((p) => p + 80), attentionMask: masks.flat() },
      adapters,
      {
        ops: out.ops.cache,
        fused: out.fused.cache,
      },
    );
    expect(worst).toBeLessThan(TOL);
  }, 120_000);
});
