import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../main/engine/manifest';
import { FIXTURE_DIR } from '../../int/engine/fixture';

const fixture = () => JSON.parse(readFileSync(join(FIXTURE_DIR, 'bundle.json'), 'utf8'));
const withEdit = (edit: (m: ReturnType<typeof fixture>) => void) => {
  const m = fixture();
  edit(m);
  return () => parseManifest(m);
};

describe('parseManifest', () => {
  it('reads the fixture', () => {
    const m = parseManifest(fixture());
    expect(m.architecture.layers).toBe(2);
    expect(m.lora.targets.map((t) => t.module)).toEqual(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);
    expect(m.hypernet).toBeNull();
  });

  it('refuses other formats and versions with a clear message', () => {
    expect(withEdit((m) => (m.format = 'pskills.bundle/3'))).toThrow(
      'bundle.json: bundle format "pskills.bundle/3" is not supported; this studio reads "pskills.bundle/1" and "pskills.bundle/2"',
    );
    expect(() => parseManifest({ name: 'x' })).toThrow(/not a pskills bundle manifest \(format is undefined/);
  });

  it('names the field that is wrong', () => {
    expect(withEdit((m) => delete m.architecture.head_dim)).toThrow(/^bundle\.json: architecture\.head_dim: /);
    expect(withEdit((m) => (m.files['lm.onnx'].sha256 = 'abc'))).toThrow(
      /files\.lm\.onnx\.sha256: 64 lowercase hex digits/,
    );
    expect(withEdit((m) => (m.lora.targets[0].module = 'qq'))).toThrow(/lora\.targets\.0\.module: /);
    expect(withEdit((m) => (m.special_tokens.stop = [3, 999]))).toThrow(
      /special_tokens\.stop\.1: id 999 >= tokenizer vocab_size/,
    );
  });

  it('checks fields against each other', () => {
    expect(withEdit((m) => (m.architecture.kv_heads = 3))).toThrow(
      /architecture\.kv_heads: heads 4 is not a multiple of kv_heads 3/,
    );
    expect(withEdit((m) => (m.lora.targets[6].d_in = 64))).toThrow(
      /lora\.targets\.6: module down: \(d_in, d_out\) = \(64, 64\), the architecture gives \(128, 64\)/,
    );
    expect(withEdit((m) => (m.lora.layers = [0, 2]))).toThrow(/lora\.layers\.1: layer 2 does not exist/);
    expect(withEdit((m) => delete m.files['tokenizer.json'])).toThrow(
      /tokenizer\.file: tokenizer\.json is not listed in files/,
    );
    expect(withEdit((m) => m.io.lm.inputs.pop())).toThrow(/io\.lm\.inputs: not an input list of format 1 or 2/);
  });

  it('requires the hypernet and its ablation files to be listed in files', () => {
    const hyper = (m: ReturnType<typeof fixture>) => {
      m.hypernet = {
        file: 'hypernet.onnx',
        kind: 'perceiver',
        rank: m.lora.default_rank,
        d_enc: m.architecture.hidden,
        inputs: ['states', 'mask'],
        outputs: ['A.{module}', 'B.{module}'],
        chunk_combine: 'mean',
        params: 1,
      };
      m.files['hypernet.onnx'] = { sha256: '0'.repeat(64), bytes: 1 };
    };
    expect(withEdit((m) => hyper(m))).not.toThrow();
    expect(
      withEdit((m) => {
        hyper(m);
        m.hypernet.ablations = { t2l_baseline: 'hypernet-t2l_baseline.onnx' };
      }),
    ).toThrow(/hypernet\.ablations\.t2l_baseline: hypernet-t2l_baseline\.onnx is not listed in files/);
  });

  it('accepts a plain (LoRA-free) input list and refuses file names that leave the folder', () => {
    expect(() => withEdit((m) => (m.io.lm.inputs = m.io.lm.inputs.slice(0, 6)))()).not.toThrow();
    expect(withEdit((m) => (m.io.lm.file = '../lm.onnx'))).toThrow(/io\.lm\.file: a plain file name/);
  });

  it('reads fused attention with its step.* outputs, and refuses either without the other', () => {
    const stepOutputs = ['logits', 'step.{i}.key', 'step.{i}.value', 'hidden_states'];
    const fused = withEdit((m) => {
      m.io.lm.attention = 'fused';
      m.io.lm.outputs = stepOutputs;
    })();
    expect(fused.io.lm.attention).toBe('fused');
    expect(withEdit((m) => (m.io.lm.attention = 'fused'))).toThrow(/io\.lm\.outputs: .*fused attention/);
    expect(withEdit((m) => (m.io.lm.outputs = stepOutputs))).toThrow(/io\.lm\.outputs: not the format v1 output list/);
    expect(withEdit((m) => (m.io.lm.attention = 'flash'))).toThrow(/io\.lm\.attention/);
  });

  it('reads LoRA groups in format 2 and the per-target layout of format 1', () => {
    expect(parseManifest(fixture()).lora.groups?.map((g) => g.name)).toEqual(['qkv', 'o', 'gate', 'up', 'down']);
    const v1 = fixture();
    v1.format = 'pskills.bundle/1';
    v1.io.lm.inputs = v1.io.lm.inputs
      .filter((t: string) => t !== 'logits_to_keep')
      .map((t: string) => t.replace('{group}', '{module}'));
    expect(parseManifest(v1).lora.groups).toBeUndefined(); // a format 1 reader ignores the field
    expect(withEdit((m) => (m.format = 'pskills.bundle/1'))).toThrow(
      /io\.lm\.inputs: logits_to_keep and lora\.\{i\}\.\{group\} inputs are format pskills\.bundle\/2/,
    );
    expect(withEdit((m) => delete m.lora.groups)).toThrow(/lora\.groups: required/);
  });

  it('refuses groups that do not cover the targets exactly, naming the member', () => {
    expect(withEdit((m) => (m.lora.groups[0].modules[1].module = 'down'))).toThrow(
      /lora\.groups\.0\.modules\.1: module down: d_in 128, the group has 64/,
    );
    expect(withEdit((m) => (m.lora.groups[0].modules[2].offset = 100))).toThrow(
      /lora\.groups\.0\.modules\.2: module v: columns 100…132 pass the group's d_out 128/,
    );
    expect(withEdit((m) => m.lora.groups.pop())).toThrow(/lora\.groups: target down is in no group/);
    expect(withEdit((m) => m.lora.groups[1].modules.push({ module: 'q', offset: 0 }))).toThrow(
      /module q is in two groups/,
    );
  });
});
