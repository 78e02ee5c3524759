// The committed default bundle (resources/bundles/default): it loads with every hash checked, its
// training card says what made it, and it is a trained model, not random weights: on ordinary English
// it needs far fewer bits per byte than a uniform guess over its vocabulary (2.7 on this text).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSkill, generateAll, loadBundle, type Bundle } from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { DEFAULT_BUNDLE_DIR } from '../../../main/paths';

const PARAGRAPH =
  'The program reads its configuration file when it starts. If the file is missing, the default ' +
  'values are used and a warning is written to the log. To change the port, edit the file and ' +
  'restart the service.';

/** Teacher-forced bits per byte of `text` after its first token. */
async function bitsPerByte(bundle: Bundle, text: string): Promise<number> {
  const ids = bundle.tokenizer.encode(text);
  const { logits } = await bundle.lm.forward({
    batch: 1,
    inputIds: ids,
    positionIds: ids.map((_, i) => i),
    attentionMask: ids.map(() => 1),
    cache: KvCache.empty(bundle.manifest, 1),
    lora: bundle.lm.loraFeeds([null]),
  });
  const vocab = bundle.manifest.architecture.vocab;
  let nats = 0;
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits.subarray(t * vocab, (t + 1) * vocab);
    let max = -Infinity;
    for (const v of row) max = Math.max(max, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    nats += max + Math.log(sum) - row[ids[t + 1]!]!;
  }
  const scoredBytes = Buffer.byteLength(text) - Buffer.byteLength(bundle.tokenizer.decode([ids[0]!]));
  return nats / Math.LN2 / scoredBytes;
}

describe('default bundle', () => {
  let bundle: Bundle;
  beforeAll(async () => {
    bundle = await loadBundle(DEFAULT_BUNDLE_DIR); // verifies every file's sha256
  }, 120_000);
  afterAll(async () => bundle?.dispose());

  it('fits the 60 MB budget', () => {
    const bytes = readdirSync(DEFAULT_BUNDLE_DIR).reduce((n, f) => n + statSync(join(DEFAULT_BUNDLE_DIR, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(60e6);
  });

  it('carries a training card with config, seed, steps, data hashes and metrics', () => {
    // The card is free-form JSON in the format (docs/bundle-format.md); these are the fields the export writes.
    const card = bundle.manifest.training_card as {
      kind: string;
      steps: number;
      seed: number;
      config: { model: { hidden_size: number } };
      data: { corpus_manifest_sha256: string; tokenizer_sha256: string };
      metrics: { val_bpb_docs_val: number };
      compression_baselines: { docs_val: { xz_9_bpb: number } };
    };
    expect(card.kind).toBe('pretrained');
    expect(card.steps).toBeGreaterThan(0);
    expect(typeof card.seed).toBe('number');
    expect(card.config.model.hidden_size).toBe(bundle.manifest.architecture.hidden);
    expect(card.data.corpus_manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(card.data.tokenizer_sha256).toMatch(/^[0-9a-f]{64}$/);
    // The claim docs/results.md makes, as recorded at export: the model beats xz -9 on held-out docs.
    expect(card.metrics.val_bpb_docs_val).toBeLessThan(card.compression_baselines.docs_val.xz_9_bpb);
  });

  it('is trained: English costs well under a uniform guess', async () => {
    const uniform =
      Math.log2(bundle.manifest.tokenizer.vocab_size) /
      (Buffer.byteLength(PARAGRAPH) / bundle.tokenizer.encode(PARAGRAPH).length);
    const bpb = await bitsPerByte(bundle, PARAGRAPH);
    console.info(`default bundle: ${bpb.toFixed(3)} bits per byte on the paragraph, uniform ${uniform.toFixed(3)}`);
    expect(bpb).toBeLessThan(0.7 * uniform);
  }, 60_000);

  it('compiles a skill with its hypernetwork', async () => {
    expect(bundle.manifest.hypernet?.kind).toBe('perceiver');
    const text =
      '---\nname: tidy-commits\ndescription: Write small commits.\n---\n\n# Tidy commits\n\n## Steps\n1. Stage one change.\n2. Write why, not what.\n';
    const compiled = await compileSkill(bundle, text);
    expect(compiled.chunks).toHaveLength(1);
    expect(compiled.rank).toBe(bundle.manifest.lora.default_rank);
    expect(compiled.engine.targets.size).toBe(bundle.manifest.lora.layers.length * bundle.manifest.lora.targets.length);
    for (const pair of compiled.engine.targets.values()) {
      expect(pair.A.some((v) => v !== 0) && pair.B.some((v) => v !== 0)).toBe(true);
    }
  }, 60_000);

  it('generates deterministically without a bundle being named', async () => {
    const request = { prompt: 'The configuration file', maxNewTokens: 12, stopTokenIds: [] };
    const [a] = await generateAll(bundle, [request]);
    const [b] = await generateAll(bundle, [request]);
    expect(a!.tokens).toHaveLength(12);
    expect(b!.text).toBe(a!.text);
  }, 60_000);
});
