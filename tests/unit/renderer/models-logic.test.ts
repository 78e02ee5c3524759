// The Models page's pure parts: its route, the add form checked with the contract's schema (each
// problem named by the field's label), a card's rows, and the progress bar's fraction; and the
// parameter count a card shows, against a hand count of a small Llama-family shape.
import { describe, expect, it } from 'vitest';
import type { ModelCard } from '../../../common/api/model-schemas';
import { parameterCount } from '../../../main/models/card';
import {
  cardRows,
  createInput,
  emptyForm,
  formatParameters,
  formFor,
  localModelFacts,
  progressFraction,
} from '../../../renderer/src/lib/models/models';
import { formatRoute, parseRoute } from '../../../renderer/src/lib/shared/routes';

const card = (over: Partial<ModelCard> = {}): ModelCard => ({
  dir: '/data/bundles/qwen',
  id: 'qwen',
  origin: 'user',
  active: false,
  created: '2026-12-03T12:00:00Z',
  family: 'qwen2',
  hidden: 896,
  layers: 24,
  heads: 14,
  kvHeads: 2,
  vocab: 151936,
  maxPositions: 32768,
  parameters: 494_032_768,
  loraTargets: ['q', 'v'],
  rank: 8,
  alpha: 16,
  dtype: 'fp16',
  bytes: 3 * 1024 * 1024,
  hypernet: null,
  encoder: false,
  source: 'Qwen2.5-0.5B-Instruct',
  quantization: null,
  chatTemplate: 'ChatML',
  ...over,
});

describe('Models page', () => {
  it('has a route of its own', () => {
    expect(parseRoute('#/models')).toEqual({ page: 'models' });
    expect(formatRoute({ page: 'models' })).toBe('#/models');
  });

  it('makes the request from the form: all targets by default, the id only when given', () => {
    expect(createInput({ ...emptyForm(), source: ' /ckpt/qwen ' })).toEqual({
      input: {
        source: '/ckpt/qwen',
        dtype: 'fp32',
        loraTargets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'],
        hypernet: 'none',
      },
    });
    const picked = createInput({ ...emptyForm(), source: '/c', targets: ['down', 'q'], dtype: 'fp16', id: 'mine' });
    expect(picked).toEqual({
      input: { source: '/c', dtype: 'fp16', loraTargets: ['q', 'down'], hypernet: 'none', id: 'mine' },
    });
  });

  it('names the field of each problem in the words of the form', () => {
    const error = (form: Partial<ReturnType<typeof emptyForm>>) => {
      const r = createInput({ ...emptyForm(), ...form });
      return 'error' in r ? r.error : null;
    };
    expect(error({ source: '' })).toBe('Checkpoint folder: give the folder of a Hugging Face checkpoint');
    expect(error({ source: 'ckpt' })).toMatch(/^Checkpoint folder: must be an absolute path/);
    expect(error({ source: '/c', targets: [] })).toBe('LoRA targets: choose at least one LoRA target');
    expect(error({ source: '/c', id: '.hidden' })).toMatch(/^Bundle id: letters, digits/);
    expect(error({ source: '/c', id: 'a/b' })).toMatch(/^Bundle id: /);
  });

  it('shows a card as rows a person reads', () => {
    const rows = Object.fromEntries(cardRows(card()));
    expect(rows['Base model']).toBe('qwen2 (from Qwen2.5-0.5B-Instruct)');
    expect(rows['Parameters']).toBe('494.0 M');
    expect(rows['Vocabulary']).toBe('151,936');
    expect(rows['Context']).toBe('32,768 tokens');
    expect(rows['LoRA targets']).toBe('q, v (r 8, α 16)');
    expect(rows['Weights']).toBe('fp16');
    expect(rows['Size on disk']).toBe('3.0 MiB');
    expect(rows['Hypernetwork']).toMatch(/^none: Instant is unavailable; skills compile by distillation/);
    expect(rows['Chat template']).toBe('ChatML');
    expect(rows['Quantization']).toBeUndefined();
    const gguf = Object.fromEntries(cardRows(card({ quantization: 'Q4_K_M', dtype: 'fp32', source: 'm.gguf' })));
    expect([gguf['Quantization'], gguf['Base model']]).toEqual(['Q4_K_M (dequantized to fp32)', 'qwen2 (from m.gguf)']);
    expect(Object.fromEntries(cardRows(card({ hypernet: 'perceiver', encoder: true })))['Encoder graph']).toBe(
      'encoder.onnx',
    );
    expect([formatParameters(1_234_567_890), formatParameters(98_304), formatParameters(12)]).toEqual([
      '1.2 B',
      '98.3 K',
      '12',
    ]);
  });

  it('makes a GGUF request without a hypernetwork, and fills the form from a found model', () => {
    expect(createInput({ ...emptyForm(), kind: 'gguf', source: '/m/x.gguf', hypernet: 'init' })).toEqual({
      input: { source: '/m/x.gguf', dtype: 'fp32', loraTargets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] },
    });
    const err = createInput({ ...emptyForm(), kind: 'gguf', source: 'x.gguf' });
    expect('error' in err && err.error).toMatch(/^GGUF file: must be an absolute path/);
    const found = {
      app: 'ollama' as const,
      path: '/h/.ollama/models/blobs/sha256-ab',
      label: 'smollm2:135m',
      suggestedId: 'smollm2-135m',
      bytes: 2 * 1024 * 1024,
      family: 'llama',
      name: 'SmolLM2',
      parameters: 134_515_008,
      quantization: 'Q4_1',
      context: 8192,
      chatTemplate: 'ChatML',
      problem: null,
    };
    expect(formFor(found)).toMatchObject({ kind: 'gguf', source: found.path, id: 'smollm2-135m' });
    expect(localModelFacts(found)).toBe(
      'llama · 134.5 M parameters · Q4_1 · 8,192 context · ChatML template · 2.0 MiB',
    );
  });

  it('turns exporter steps into a fraction', () => {
    expect(progressFraction(null)).toBe(0);
    expect(progressFraction({ step: 2, steps: 4, message: 'exporting lm.onnx (fp32)' })).toBe(0.5);
    expect(progressFraction({ step: 5, steps: 5, message: 'attaching' })).toBe(1);
  });

  it('counts parameters as PyTorch does for a Llama-family shape', () => {
    const arch = {
      family: 'qwen2' as const,
      hidden: 8,
      layers: 2,
      heads: 2,
      kv_heads: 1,
      head_dim: 4,
      intermediate: 16,
      vocab: 10,
      max_positions: 64,
      rms_eps: 1e-6,
      rope: { theta: 10000, scaling: null },
      tie_embeddings: true,
      qkv_bias: true,
      o_bias: false,
      sliding_window: null,
    };
    // embed 80; per layer: q 8·8+8, k 8·4+4, v 8·4+4, o 8·8, mlp 3·8·16, norms 2·8 → 608; final norm 8
    expect(parameterCount(arch)).toBe(80 + 2 * 608 + 8);
    expect(parameterCount({ ...arch, tie_embeddings: false, qkv_bias: false })).toBe(160 + 2 * (608 - 16) + 8);
  });
});
