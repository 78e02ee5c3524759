// A format 1 bundle (one LoRA pair per target, q/k/v unfused: tests/fixtures/bundle-tiny-v1, the tiny
// fixture as the exporter wrote it before LoRA groups) still loads and gives the PyTorch oracle's numbers.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMAT_V1, generateAll, loadBundle, type Bundle } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { APP_ROOT } from '../../../main/paths';
import { fixtureAdapter, maxAbsDiff, oracle } from './fixture';

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(join(APP_ROOT, 'tests/fixtures/bundle-tiny-v1'));
});
afterAll(() => bundle.dispose());

const adapterOf = (name: string | null) => (name === null || name === 'none' ? null : fixtureAdapter(name));

describe('a format 1 bundle', () => {
  it('is format 1, with lm.onnx taking a pair per target', () => {
    expect(bundle.manifest.format).toBe(FORMAT_V1);
    expect(bundle.manifest.lora.groups).toBeUndefined();
    expect(Object.keys(bundle.lm.loraFeeds([null]))).toContain('lora.0.q.A');
  });

  it('gives PyTorch logits with an adapter', async () => {
    const p = oracle.prompts[0]!;
    const { logits } = await bundle.lm.forward({
      batch: 1,
      inputIds: p.ids,
      positionIds: p.ids.map((_, i) => i),
      attentionMask: p.ids.map(() => 1),
      cache: KvCache.empty(bundle.manifest, 1),
      lora: bundle.lm.loraFeeds([adapterOf('r4')]),
    });
    const V = bundle.lm.vocab;
    p.runs.r4.logit_positions.forEach((pos, n) =>
      expect(maxAbsDiff(logits.subarray(pos * V, (pos + 1) * V), p.runs.r4.logits[n]!)).toBeLessThan(oracle.tolerance),
    );
  });

  it('gives PyTorch greedy tokens for a batch with a different adapter per row', async () => {
    const rows = oracle.batch.rows.map((r) => ({
      prompt: r.ids,
      adapter: adapterOf(r.adapter),
      maxNewTokens: 32,
      stopTokenIds: [],
    }));
    expect((await generateAll(bundle, rows)).map((r) => r.tokens)).toEqual(oracle.batch.greedy);
  });
});
