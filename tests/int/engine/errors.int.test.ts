// Bad bundles and bad requests fail with an error naming the culprit, and the engine keeps working.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoraPair, TargetKey } from '../../../main/adapters/types';
import {
  engineAdapter,
  EngineError,
  generateAll,
  loadBundle,
  type Bundle,
  type EngineAdapter,
} from '../../../main/engine';
import { KvCache } from '../../../main/engine/kv-cache';
import { float32, int64 } from '../../../main/engine/ort';
import { copyFixture, FIXTURE_DIR, fixtureAdapter, oracle } from './fixture';

let bundle: Bundle;
beforeAll(async () => {
  bundle = await loadBundle(FIXTURE_DIR);
});
afterAll(() => bundle.dispose());

const greedy = { prompt: oracle.prompts[0]!.ids, maxNewTokens: 32, stopTokenIds: [] };
async function stillGenerates() {
  const [res] = await generateAll(bundle, [greedy]);
  expect(res!.tokens).toEqual(oracle.prompts[0]!.runs.none.greedy);
}

const readManifest = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

function editManifest(dir: string, edit: (m: ReturnType<typeof readManifest>) => void) {
  const path = join(dir, 'bundle.json');
  const m = readManifest(path);
  edit(m);
  writeFileSync(path, JSON.stringify(m));
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('loadBundle rejects a broken bundle, naming what is wrong', () => {
  it('a missing file', async () => {
    const dir = copyFixture();
    rmSync(join(dir, 'tokenizer.json'));
    const err = await loadBundle(dir).catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(/tokenizer\.json: listed in bundle\.json but missing/);
  });

  it('a missing bundle.json', async () => {
    const dir = copyFixture();
    rmSync(join(dir, 'bundle.json'));
    await expect(loadBundle(dir)).rejects.toThrow(/bundle\.json: missing/);
  });

  it('a sha256 mismatch, with both hashes', async () => {
    const dir = copyFixture();
    const path = join(dir, 'lm.onnx');
    const bytes = readFileSync(path);
    bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff; // same size, different content
    writeFileSync(path, bytes);
    const err = await loadBundle(dir).catch((e) => e);
    expect(err.message).toContain('lm.onnx: sha256 ');
    expect(err.message).toContain(sha256(path));
    expect(err.message).toContain(
      JSON.parse(readFileSync(join(FIXTURE_DIR, 'bundle.json'), 'utf8')).files['lm.onnx'].sha256,
    );
  });

  it('a truncated file', async () => {
    const dir = copyFixture();
    writeFileSync(join(dir, 'tokenizer_config.json'), '{}');
    await expect(loadBundle(dir)).rejects.toThrow(/tokenizer_config\.json: 2 bytes, bundle\.json says \d+/);
  });

  it('a corrupt lm.onnx whose hash was updated', async () => {
    const dir = copyFixture();
    const path = join(dir, 'lm.onnx');
    writeFileSync(path, Buffer.from('not an onnx graph'));
    editManifest(dir, (m) => (m.files['lm.onnx'] = { sha256: sha256(path), bytes: 17 }));
    await expect(loadBundle(dir)).rejects.toThrow(/lm\.onnx: not a readable ONNX model/);
  });

  it('bundle.json that is not JSON', async () => {
    const dir = copyFixture();
    writeFileSync(join(dir, 'bundle.json'), '{"format": ');
    await expect(loadBundle(dir)).rejects.toThrow(/bundle\.json: not valid JSON/);
  });

  it('an unknown format version', async () => {
    const dir = copyFixture();
    editManifest(dir, (m) => (m.format = 'pskills.bundle/3'));
    await expect(loadBundle(dir)).rejects.toThrow(
      /"pskills\.bundle\/3" is not supported; this studio reads "pskills\.bundle\/1" and "pskills\.bundle\/2"/,
    );
  });

  it('a field of the wrong type', async () => {
    const dir = copyFixture();
    editManifest(dir, (m) => (m.architecture.kv_heads = 'two'));
    await expect(loadBundle(dir)).rejects.toThrow(/architecture\.kv_heads: /);
  });

  it('a manifest that disagrees with the graph', async () => {
    const dir = copyFixture();
    editManifest(dir, (m) => (m.architecture.vocab = 400));
    await expect(loadBundle(dir)).rejects.toThrow(
      /lm\.onnx does not match bundle\.json: output 'logits' dimension 2 is 384, bundle\.json says 400/,
    );
  });

  it('leaves the loaded bundle working', stillGenerates);
});

function withTarget(
  base: EngineAdapter,
  key: TargetKey,
  edit: (p: LoraPair) => LoraPair,
  rank = base.rank,
): EngineAdapter {
  const targets = new Map(base.targets);
  targets.set(
    key,
    edit(targets.get(key) ?? { dIn: 64, dOut: 64, A: new Float32Array(64 * rank), B: new Float32Array(rank * 64) }),
  );
  return engineAdapter(rank, targets);
}

describe('requests that do not fit fail before running, then generation works', () => {
  const r4 = () => fixtureAdapter('r4');
  it.each([
    [
      'A of the wrong length',
      () => withTarget(r4(), '1.q', (p) => ({ ...p, A: p.A.subarray(4) })),
      /row 1, layer 1, module "q": A has 252 values, expected d_in×r = 64×4 = 256/,
    ],
    [
      'a wrong d_out',
      () => withTarget(r4(), '0.k', (p) => ({ ...p, dOut: 64 })),
      /row 1, layer 0, module "k": d_out 64, the bundle has 32/,
    ],
    [
      'B of the wrong length',
      () => withTarget(r4(), '0.down', (p) => ({ ...p, B: new Float32Array(5) })),
      /layer 0, module "down": B has 5 values, expected r×d_out = 4×64 = 256/,
    ],
    [
      'an unknown module',
      () => withTarget(r4(), '0.lm_head', (p) => p),
      /layer 0, module "lm_head": not a LoRA target of this bundle/,
    ],
    [
      'a layer the model lacks',
      () => withTarget(r4(), '7.q', (p) => p),
      /layer 7, module "q": layer 7 has no LoRA inputs/,
    ],
    [
      'a NaN',
      () => withTarget(r4(), '0.v', (p) => ({ ...p, B: p.B.map((v, i) => (i === 3 ? NaN : v)) })),
      /layer 0, module "v": B\[3\] is NaN/,
    ],
  ])('an adapter with %s', async (_, make, message) => {
    await expect(generateAll(bundle, [greedy, { ...greedy, adapter: make() }])).rejects.toThrow(message);
    await stillGenerates();
  });

  it('a prompt longer than the context', async () => {
    const long = Array<number>(300).fill(42);
    await expect(generateAll(bundle, [{ prompt: long }])).rejects.toThrow(
      /prompt is 300 tokens; the model's context is 256 positions \(max_positions\)/,
    );
    await stillGenerates();
  });

  it('bad sampling options and token ids', async () => {
    await expect(generateAll(bundle, [{ prompt: 'x', sampling: { topP: 0 } }])).rejects.toThrow(/sampling\.topP is 0/);
    await expect(generateAll(bundle, [{ prompt: [1, 384] }])).rejects.toThrow(/token id 384 is outside the vocabulary/);
    await expect(generateAll(bundle, [{ prompt: '' }])).rejects.toThrow(/prompt is empty/);
    await stillGenerates();
  });
});

describe('the session checks each feed against the graph', () => {
  const feeds = () => {
    const f: Record<string, ReturnType<typeof float32>> = {
      input_ids: int64([5, 6], [1, 2]),
      attention_mask: int64([1, 1], [1, 2]),
      position_ids: int64([0, 1], [1, 2]),
      logits_to_keep: int64([0], [1]),
      ...bundle.lm.loraFeeds([null]),
    };
    for (const i of [0, 1])
      for (const k of ['key', 'value']) f[`past_key_values.${i}.${k}`] = float32(new Float32Array(0), [1, 2, 0, 16]);
    return f;
  };

  it('names the input and dimension, logs every feed, and runs fine afterwards', async () => {
    const session = bundle.lm.session;
    const log = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const bad = { ...feeds(), 'lora.1.up.A': float32(new Float32Array(63 * 0), [1, 63, 0]) };
    await expect(session.run(bad)).rejects.toThrow(/input 'lora\.1\.up\.A' dimension 1: 63, the graph wants 64/);
    expect(log.mock.calls[0]![0]).toMatch(/input_ids: int64 \[1, 2\][\s\S]*lora\.1\.up\.A: float32 \[1, 63, 0\]/);
    await expect(session.run({ ...feeds(), position_ids: int64([0, 1, 2], [1, 3]) })).rejects.toThrow(
      /input 'position_ids' dimension 1 \(sequence_length\): 3, but 'input_ids' gave sequence_length = 2/,
    );
    await expect(session.run({ ...feeds(), input_ids: float32(new Float32Array(2), [1, 2]) })).rejects.toThrow(
      /input 'input_ids': dtype float32, the graph wants int64/,
    );
    const { input_ids: _, ...missing } = feeds();
    await expect(session.run(missing)).rejects.toThrow(/input 'input_ids' is missing/);
    log.mockRestore();
    const out = await session.run(feeds(), ['logits']);
    expect(out.logits!.dims).toEqual([1, 2, 384]);
  });
});

it('falls back to cpu, saying why, when the asked-for provider is unavailable', async () => {
  const messages: string[] = [];
  const b = await loadBundle(FIXTURE_DIR, { provider: 'cuda', logger: (m) => messages.push(m) });
  expect(b.lm.session.provider).toBe('cpu');
  expect(messages.join('\n')).toMatch(/execution provider 'cuda' .*; using cpu/);
  const [res] = await generateAll(b, [greedy]);
  expect(res!.tokens).toEqual(oracle.prompts[0]!.runs.none.greedy);
  await b.dispose();
});

it('an onnxruntime failure on feeds that fit the metadata names the graph, logs the feeds, and the session goes on', async () => {
  const log = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const past = Object.fromEntries(
    [0, 1].flatMap((i) =>
      ['key', 'value'].map((k) => [`past_key_values.${i}.${k}`, float32(new Float32Array(0), [1, 2, 0, 16])]),
    ),
  );
  const feeds = {
    input_ids: int64([5, 99999], [1, 2]),
    attention_mask: int64([1, 1], [1, 2]),
    position_ids: int64([0, 1], [1, 2]),
    logits_to_keep: int64([0], [1]),
    ...past,
    ...bundle.lm.loraFeeds([null]),
  };
  await expect(bundle.lm.session.run(feeds)).rejects.toThrow(/lm\.onnx: onnxruntime failed: /);
  expect(log.mock.calls[0]![0]).toMatch(/input_ids: int64 \[1, 2\][\s\S]*attention_mask: int64 \[1, 2\]/);
  log.mockRestore();
  await stillGenerates();
});

it('a mask that does not span past + sequence is refused before onnxruntime (which would broadcast it)', async () => {
  const step = {
    batch: 1,
    inputIds: [5, 6],
    positionIds: [0, 1],
    attentionMask: [1],
    cache: KvCache.empty(bundle.manifest, 1),
    lora: bundle.lm.loraFeeds([null]),
  };
  await expect(bundle.lm.forward(step)).rejects.toThrow('attention mask has 1 slots per row; past 0 + sequence 2 = 2');
  await stillGenerates();
});
