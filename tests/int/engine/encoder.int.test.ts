// encoder.onnx (docs/bundle-format.md "encoder.onnx"): the default bundle's encoder graph gives the
// states lm.onnx's hidden_states gives, compile through it gives the adapter compile through lm.onnx
// gives, and a bundle.json whose io.encoder is wrong is refused naming the field or the file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bundle, compileSkill, loadBundle } from '../../../main/engine';
import { DEFAULT_BUNDLE_DIR } from '../../../main/paths';
import { copyFixture, maxAbsDiff } from './fixture';

const SKILL =
  '---\nname: tidy-commits\ndescription: Write small commits.\n---\n\n# Tidy commits\n\n## Steps\n' +
  '1. Stage one change.\n2. Write why, not what.\n3. Run the tests before you push.\n';

/** The same bundle with encoder.onnx left out: compile falls back to lm.onnx's hidden_states. */
const withoutEncoder = (b: Bundle) =>
  new Bundle(b.dir, b.manifest, b.lm, b.tokenizer, b.chat, b.loadMs, b.hypernet, null);

describe('encoder.onnx in the default bundle', () => {
  let bundle: Bundle;
  beforeAll(async () => {
    bundle = await loadBundle(DEFAULT_BUNDLE_DIR);
  }, 120_000);
  afterAll(async () => bundle?.dispose());

  it('is listed and loaded, and compile reads it', () => {
    expect(bundle.manifest.io.encoder?.file).toBe('encoder.onnx');
    expect(bundle.encoderGraph).not.toBeNull();
    expect(bundle.encoder.file).toBe('encoder.onnx');
    expect(withoutEncoder(bundle).encoder.file).toBe('lm.onnx');
  });

  it("gives lm.onnx's layer-k states, rows of different lengths in one batch", async () => {
    const rows = [
      bundle.tokenizer.encode('The program reads its configuration file when it starts.'),
      bundle.tokenizer.encode('To change the port, edit the file.'),
    ];
    const got = await bundle.encoder.encodeBatch(rows);
    const want = await bundle.lm.encodeBatch(rows);
    const d = bundle.manifest.architecture.hidden;
    for (const [i, r] of rows.entries()) {
      expect(got[i]!.length).toBe(r.length * d);
      const scale = Math.max(...want[i]!.map(Math.abs));
      expect(maxAbsDiff(got[i]!, want[i]!) / scale).toBeLessThan(1e-5);
    }
  }, 60_000);

  it('compiles to the adapter compile through lm.onnx gives', async () => {
    const a = await compileSkill(bundle, SKILL);
    const b = await compileSkill(withoutEncoder(bundle), SKILL);
    expect(a.encoderFile).toBe('encoder.onnx');
    expect(b.encoderFile).toBe('lm.onnx');
    expect(a.rank).toBe(b.rank);
    for (const [key, pa] of a.engine.targets) {
      const pb = b.engine.targets.get(key)!;
      expect(maxAbsDiff(pa.A, pb.A)).toBeLessThan(1e-4);
      expect(maxAbsDiff(pa.B, pb.B)).toBeLessThan(1e-4);
    }
  }, 60_000);
});

describe('a wrong io.encoder is refused', () => {
  function withEncoderEntry(entry: unknown): string {
    const dir = copyFixture();
    const path = join(dir, 'bundle.json');
    const m = JSON.parse(readFileSync(path, 'utf8'));
    m.io.encoder = entry;
    writeFileSync(path, JSON.stringify(m));
    return dir;
  }
  const io = { float_dtype: 'float32', inputs: ['input_ids', 'attention_mask', 'position_ids'] };

  it('outputs that are not the v1 list', async () => {
    const dir = withEncoderEntry({ ...io, file: 'lm.onnx', outputs: ['logits'] });
    await expect(loadBundle(dir)).rejects.toThrow(/io\.encoder: not the format v1 encoder I\/O/);
  });

  it('a file not listed in files', async () => {
    const dir = withEncoderEntry({ ...io, file: 'encoder.onnx', outputs: ['hidden_states'] });
    await expect(loadBundle(dir)).rejects.toThrow(/io\.encoder\.file: encoder\.onnx is not listed in files/);
  });

  it('a graph whose I/O is not the encoder’s (lm.onnx named as the encoder)', async () => {
    const dir = withEncoderEntry({ ...io, file: 'lm.onnx', outputs: ['hidden_states'] });
    await expect(loadBundle(dir)).rejects.toThrow(/lm\.onnx does not match bundle\.json: unexpected input/);
  });
});
