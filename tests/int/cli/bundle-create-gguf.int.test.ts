// `pskills bundle create --from-gguf` on a tiny random GGUF (training/tests/gguf_tiny.py: Q8_0, Q4_0,
// Q4_1, F16 and BF16 tensors): the bundle loads in the engine (tokenizer, chat template, graph I/O
// checked) with no hypernetwork. Logit parity with transformers is the Python suite's
// (training/tests/test_from_gguf.py). Needs training/.venv.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingPython } from '../../../main/training-venv';
import { loadBundle } from '../../../main/engine';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const hasVenv = existsSync(trainingPython());
const pskills = (args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 240_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe.skipIf(!hasVenv)('pskills bundle create --from-gguf (needs training/.venv)', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-from-gguf-'));
    const made = spawnSync(trainingPython(), ['training/tests/gguf_tiny.py', '--out', join(tmp, 'tiny.gguf')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(made.status, made.stderr).toBe(0);
  }, 180_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('writes a bundle beside the file that the engine loads', async () => {
    const r = pskills(['bundle', 'create', '--from-gguf', join(tmp, 'tiny.gguf')]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/\[1\/4\] reading and dequantizing tiny\.gguf/);
    expect(r.out).toMatch(/wrote .*tiny: llama from tiny\.gguf \(.*Q4_0.*Q8_0.*\).* hypernet none/);
    const bundle = await loadBundle(join(tmp, 'tiny'));
    try {
      expect(bundle.manifest.hypernet).toBeNull();
      expect(bundle.manifest.architecture.family).toBe('llama');
      // layered train-step graphs (docs/bundle-format.md "Layered kind"), bundle create's default
      expect(Object.keys(bundle.manifest.files)).toContain('train_layer_vjp-4x64.onnx');
      expect(bundle.manifest.train_step!.buckets.map((b) => `${b.batch}x${b.length}`)).toEqual([
        '4x64',
        '4x128',
        '4x256',
      ]);
    } finally {
      await bundle.dispose();
    }
  }, 480_000);

  it('refuses a truncated file by name and leaves nothing behind', () => {
    const bad = join(tmp, 'cut.gguf');
    // version 3, 1 tensor, 2 metadata keys, then the file ends inside the first key's length
    const head = Buffer.alloc(26);
    head.write('GGUF', 0);
    head.writeUInt32LE(3, 4);
    head.writeBigUInt64LE(1n, 8);
    head.writeBigUInt64LE(2n, 16);
    head.writeUInt16LE(5, 24);
    writeFileSync(bad, head);
    const r = pskills(['bundle', 'create', '--from-gguf', bad, '--out', join(tmp, 'cut')]);
    // The Node gate refuses it before Python starts (exit 2), naming the file and where it ends.
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cut\.gguf: truncated at byte 26/);
    expect(readdirSync(tmp).filter((n) => n.startsWith('.cut') || n === 'cut')).toEqual([]);
  }, 120_000);
});

describe('pskills bundle create --from-gguf: arguments', () => {
  it('says what is wrong before starting Python', () => {
    expect(pskills(['bundle', 'create', '--from-gguf', 'x.gguf', '--from-hf', 'y']).code).toBe(2);
    const missing = pskills(['bundle', 'create', '--from-gguf', join(tmpdir(), 'no-such.gguf')]);
    expect(missing.err).toMatch(/--from-gguf: .*no-such\.gguf: no such file/);
    const dir = mkdtempSync(join(tmpdir(), 'pskills-gguf-args-'));
    try {
      writeFileSync(join(dir, 'm.gguf'), 'GGUF');
      const hyper = pskills(['bundle', 'create', '--from-gguf', join(dir, 'm.gguf'), '--hypernet', 'init']);
      expect(hyper.err).toMatch(/--hypernet and --hyper-config go with --from-hf only/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
