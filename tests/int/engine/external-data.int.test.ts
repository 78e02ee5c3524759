// ONNX external data in a bundle (docs/bundle-format.md "encoder.onnx"): the default bundle's
// encoder.onnx stores no weights of its own but reads lm.onnx's bytes, loads and verifies through
// lm.onnx's hash, and an encoder.onnx whose data lies outside the bundle's listed files is refused
// naming the graph before onnxruntime opens it.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../../main/engine';
import { checkExternalData, externalTensors } from '../../../main/engine/external-data';
import { parseManifest } from '../../../main/engine/manifest';
import { DEFAULT_BUNDLE_DIR } from '../../../main/paths';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of the default bundle whose encoder.onnx reads from `location` instead of lm.onnx (same
 * length, so the protobuf stays well formed), bundle.json's entry updated so the hashes pass. */
function withLocation(location: string): string {
  expect(location).toHaveLength('lm.onnx'.length);
  const dir = mkdtempSync(join(tmpdir(), 'pskills-extdata-'));
  dirs.push(dir);
  cpSync(DEFAULT_BUNDLE_DIR, dir, { recursive: true });
  const path = join(dir, 'encoder.onnx');
  const bytes = readFileSync(path);
  const from = Buffer.from('lm.onnx');
  let count = 0;
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1), count++)
    bytes.write(location, at, 'latin1');
  expect(count).toBe(externalTensors(join(DEFAULT_BUNDLE_DIR, 'encoder.onnx')).length);
  writeFileSync(path, bytes);
  const manifest = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8'));
  manifest.files['encoder.onnx'] = {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
  };
  writeFileSync(join(dir, 'bundle.json'), JSON.stringify(manifest, null, 2) + '\n');
  return dir;
}

describe('encoder.onnx reading lm.onnx’s weights', () => {
  it('the default bundle’s encoder.onnx holds a graph, its weights are ranges of lm.onnx', () => {
    const tensors = externalTensors(join(DEFAULT_BUNDLE_DIR, 'encoder.onnx'));
    expect(tensors.length).toBeGreaterThan(0);
    expect(new Set(tensors.map((t) => t.location))).toEqual(new Set(['lm.onnx']));
    expect(tensors.map((t) => t.name)).toContain('lm.model.embed_tokens.weight');
    expect(statSync(join(DEFAULT_BUNDLE_DIR, 'encoder.onnx')).size).toBeLessThan(100_000);
    // a graph that stores its own weights has none
    expect(externalTensors(join(DEFAULT_BUNDLE_DIR, 'lm.onnx'))).toEqual([]);
  });

  it('loads from a copied folder with every hash checked, and a changed lm.onnx is caught', async () => {
    const dir = withLocation('lm.onnx');
    const bundle = await loadBundle(dir);
    try {
      const ids = [bundle.tokenizer.encode('Stage one change, then write why.')];
      const [got] = await bundle.encoder.encodeBatch(ids);
      const [want] = await bundle.lm.encodeBatch(ids);
      const scale = Math.max(...want!.map(Math.abs));
      expect(Math.max(...got!.map((v, i) => Math.abs(v - want![i]!))) / scale).toBeLessThan(1e-5);
    } finally {
      await bundle.dispose();
    }
    // the encoder's weights are lm.onnx's bytes, so lm.onnx's hash covers them
    const lm = readFileSync(join(dir, 'lm.onnx'));
    lm[lm.length >> 1]! ^= 1;
    writeFileSync(join(dir, 'lm.onnx'), lm);
    await expect(loadBundle(dir)).rejects.toThrow(/lm\.onnx: sha256 [0-9a-f]+ does not match/);
  }, 60_000);

  it('refuses a location that is not listed in bundle.json files, naming encoder.onnx', async () => {
    const dir = withLocation('lm.onnz');
    writeFileSync(join(dir, 'lm.onnz'), readFileSync(join(dir, 'lm.onnx'))); // present, but never hash-checked
    await expect(loadBundle(dir)).rejects.toThrow(
      /encoder\.onnx: tensor "[^"]+" reads external data from "lm\.onnz", which is not one of the files bundle\.json lists/,
    );
  });

  it('refuses a location outside the bundle folder', async () => {
    const dir = withLocation('../lm.o');
    await expect(loadBundle(dir)).rejects.toThrow(
      /encoder\.onnx: tensor "[^"]+" reads external data from "\.\.\/lm\.o", which is not a plain file name inside the bundle folder/,
    );
  });

  it('refuses a file that is not an ONNX model, naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pskills-extdata-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'encoder.onnx'), Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    const manifest = parseManifest(JSON.parse(readFileSync(join(DEFAULT_BUNDLE_DIR, 'bundle.json'), 'utf8')));
    expect(() => checkExternalData(dir, 'encoder.onnx', manifest)).toThrow(
      /encoder\.onnx: not a readable ONNX model \(field 1 runs past its message/,
    );
  });
});
