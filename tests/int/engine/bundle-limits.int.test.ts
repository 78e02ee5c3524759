// bundle.json claims that the model does not back, and tokenizer files that are not tokenizers, are
// refused at load with an error naming the file and field.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineError, loadBundle } from '../../../main/engine';
import { MAX_POSITIONS } from '../../../main/engine/manifest';
import { copyFixture } from './fixture';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Manifest = {
  id: string;
  architecture: { max_positions: number };
  training_card: { model?: { max_positions?: number } };
  files: Record<string, { sha256: string; bytes: number }>;
};

/** A copy of the tiny fixture with bundle.json edited, and files replaced with their listing updated. */
function brokenBundle(edit: (m: Manifest) => void, replace: Record<string, string> = {}): string {
  const dir = copyFixture();
  dirs.push(dir);
  const path = join(dir, 'bundle.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  for (const [file, text] of Object.entries(replace)) {
    writeFileSync(join(dir, file), text);
    m.files[file] = { sha256: createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) };
  }
  edit(m);
  writeFileSync(path, JSON.stringify(m));
  return dir;
}

const loadError = async (dir: string) => {
  const err = (await loadBundle(dir).catch((e: unknown) => e)) as EngineError;
  expect(err).toBeInstanceOf(EngineError);
  return err;
};

describe('max_positions', () => {
  it('1e9 is refused, naming the field and the sane maximum', async () => {
    const err = await loadError(brokenBundle((m) => (m.architecture.max_positions = 1e9)));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/bundle\.json: architecture\.max_positions: .*at most 1048576/);
    expect(MAX_POSITIONS).toBe(2 ** 20);
  });

  it('more than the trained model declares (training_card.model.max_positions) is refused', async () => {
    const err = await loadError(brokenBundle((m) => (m.architecture.max_positions = 4096)));
    expect(err.message).toMatch(/architecture\.max_positions: 4096, but training_card\.model\.max_positions is 256/);
  });

  it('a card without a model section leaves the architecture to stand alone', async () => {
    const bundle = await loadBundle(brokenBundle((m) => delete m.training_card.model));
    expect(bundle.manifest.architecture.max_positions).toBe(256);
    await bundle.dispose();
  });
});

describe('tokenizer files', () => {
  it.each([
    ['a mapping that is no tokenizer', '{"garbage": true}'],
    ['a model of an unknown type', '{"model": {"type": "Nonsense"}}'],
    ['a list', '[1, 2, 3]'],
    ['null', 'null'],
  ])('tokenizer.json as %s is an error naming the file', async (_what, text) => {
    const err = await loadError(brokenBundle(() => {}, { 'tokenizer.json': text }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/tokenizer\.json: not a tokenizer this studio can read/);
  });

  it('tokenizer_config.json that is not a mapping is an error naming the file', async () => {
    const err = await loadError(brokenBundle(() => {}, { 'tokenizer_config.json': '[]' }));
    expect(err.message).toMatch(/tokenizer_config\.json: .*mapping/);
  });
});

describe('bundle id', () => {
  it('with control characters is refused like any name', async () => {
    const err = await loadError(brokenBundle((m) => (m.id = 'tiny\u001b]0;pwned\u0007')));
    expect(err.message).toMatch(/bundle\.json: id: .*U\+001B/);
  });
});
