// The Models page's GGUF import (main/api/services/model-service.ts) on a tiny random GGUF that the
// test writes (training/tests/gguf_tiny.py): the header read in Node (family, quantization, context,
// chat template); the files found in fake LM Studio and Ollama folders under a temp home; an import
// with progress whose card says what the file was; a cancel, a truncated file, an unknown
// architecture, an unsupported quantization and a file too large for the machine, each leaving
// nothing in the models folder. Needs training/.venv for the file (and the import).
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCreateProgress } from '../../../common/api/model-schemas';
import { ModelService } from '../../../main/api/services/model-service';
import { trainingPython } from '../../../main/training-venv';
import { readGgufHeader } from '../../../main/models/gguf';

const hasVenv = existsSync(trainingPython());

describe.skipIf(!hasVenv)('GGUF import on the Models page (needs training/.venv)', () => {
  let tmp: string;
  let home: string;
  let gguf: string;
  let blob: string;
  let userDir: string;
  const engine = { load: async () => undefined, info: () => ({ dir: null }) };
  const service = (over: Partial<ConstructorParameters<typeof ModelService>[2]> = {}) =>
    new ModelService(engine as never, { bundlePaths: () => [] }, { userDir, defaultDir: null, home, ...over });
  const left = () => (existsSync(userDir) ? readdirSync(userDir) : []);

  /** The tiny file with its bytes changed by `edit`. */
  const variant = (name: string, edit: (b: Buffer) => Buffer): string => {
    const path = join(tmp, name);
    writeFileSync(path, edit(readFileSync(gguf)));
    return path;
  };
  const create = async (svc: ModelService, source: string, id?: string, abortAt?: number) => {
    const progress: ModelCreateProgress[] = [];
    const ac = new AbortController();
    const card = svc.create(
      { source, ...(id ? { id } : {}) },
      {
        signal: ac.signal,
        emit: (p) => {
          progress.push(p);
          if (abortAt !== undefined && p.step >= abortAt) ac.abort();
        },
      },
    );
    return { card, progress };
  };

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-gguf-import-'));
    home = join(tmp, 'home');
    userDir = join(tmp, 'data', 'bundles');
    gguf = join(tmp, 'tiny.gguf');
    const made = spawnSync(trainingPython(), ['training/tests/gguf_tiny.py', '--out', gguf], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(made.status, made.stderr).toBe(0);
    // LM Studio: <models>/<publisher>/<model>/<file>.gguf, with a vision projector that is not a model.
    const lms = join(home, '.lmstudio', 'models', 'tiny-org', 'Tiny-GGUF');
    mkdirSync(lms, { recursive: true });
    copyFileSync(gguf, join(lms, 'tiny.Q8_0.gguf'));
    writeFileSync(join(lms, 'mmproj-tiny.gguf'), 'GGUF');
    writeFileSync(join(lms, 'broken.gguf'), 'not a gguf at all, but long enough');
    // Ollama: a manifest whose model layer names a blob by its sha256.
    const bytes = readFileSync(gguf);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const models = join(home, '.ollama', 'models');
    mkdirSync(join(models, 'blobs'), { recursive: true });
    blob = join(models, 'blobs', `sha256-${digest}`);
    writeFileSync(blob, bytes);
    const manifest = join(models, 'manifests', 'registry.ollama.ai', 'library', 'tiny', '2m');
    mkdirSync(join(manifest, '..'), { recursive: true });
    writeFileSync(
      manifest,
      JSON.stringify({
        schemaVersion: 2,
        layers: [
          { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: bytes.length },
          { mediaType: 'application/vnd.ollama.image.template', digest: 'sha256:' + '0'.repeat(64), size: 1 },
        ],
      }),
    );
  }, 180_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('reads the header in Node: family, quantization, context, chat template', () => {
    const h = readGgufHeader(gguf);
    expect(h).toMatchObject({ architecture: 'llama', family: 'llama', context: 256, layers: 2, hidden: 64 });
    expect(Object.keys(h.tensorTypes).sort()).toEqual(['BF16', 'F16', 'F32', 'Q4_0', 'Q4_1', 'Q8_0']);
    expect(h.chatTemplate).toContain('<|im_start|>');
    expect(h.parameters).toBeGreaterThan(64 * 320);
  });

  it('lists the GGUFs in LM Studio and Ollama folders under the home, with their facts or their problem', async () => {
    const list = await service().list();
    expect(list.searched).toEqual([join(home, '.lmstudio', 'models'), join(home, '.ollama', 'models')]);
    expect(list.found.map((m) => [m.app, m.label, m.suggestedId])).toEqual([
      ['lmstudio', 'tiny-org/Tiny-GGUF/tiny.Q8_0.gguf', 'tiny-org-Tiny-GGUF-tiny.Q8_0'],
      ['ollama', 'tiny:2m', 'tiny-2m'],
    ]);
    const [lms, ollama] = list.found;
    // The gate refuses it (docs/security.md "GGUF files"): skipped, with why.
    expect(list.skipped.map((k) => [k.label, k.reason])).toEqual([
      ['tiny-org/Tiny-GGUF/broken.gguf', 'not a GGUF file (no GGUF magic)'],
    ]);
    expect(lms).toMatchObject({ family: 'llama', context: 256, chatTemplate: 'ChatML', problem: null });
    expect(ollama).toMatchObject({ path: blob, family: 'llama', problem: null });
    expect(lms!.quantization).toMatch(/^(Q\d|F16|BF16)/);
  });

  it('refuses a file too large for the free memory or disk before starting, with the numbers', async () => {
    const small = service({ freeSpace: async () => ({ memory: 1_000, disk: 1e12 }) });
    const r = await create(small, gguf, 'too-big');
    await expect(r.card).rejects.toThrow(
      /tiny\.gguf: 0\.\d M parameters, 0\.00 GB as float32: more than the 0\.00 GB of free memory/,
    );
    const disk = service({ freeSpace: async () => ({ memory: 1e12, disk: 10 }) });
    await expect((await create(disk, gguf, 'too-big')).card).rejects.toThrow(
      /needs about .* GB of disk in .*, 0\.00 GB is free/,
    );
    expect(r.progress).toEqual([]);
    expect(left()).toEqual([]);
  });

  it('names the tensor of a truncated file, the key of an unknown architecture, the tensor of an unsupported type', async () => {
    const cut = variant('cut.gguf', (b) => b.subarray(0, Math.floor(b.length * 0.6)));
    await expect((await create(service(), cut)).card).rejects.toThrow(
      /cut\.gguf: truncated: tensor '[^']+' ends at byte/,
    );
    const arch = variant('arch.gguf', (b) => {
      const at = b.indexOf('general.architecture');
      const value = b.indexOf('llama', at);
      return Buffer.concat([b.subarray(0, value), Buffer.from('bloom'), b.subarray(value + 5)]);
    });
    await expect((await create(service(), arch)).card).rejects.toThrow(
      /arch\.gguf: general\.architecture 'bloom' is not supported/,
    );
    const quant = variant('quant.gguf', (b) => {
      // The tensor table entry of blk.0.attn_q.weight: name, n_dims (u32), dims (u64 each), type (u32).
      const name = Buffer.from('blk.0.attn_q.weight');
      const at = b.indexOf(name) + name.length;
      const out = Buffer.from(b);
      out.writeUInt32LE(16, at + 4 + 8 * out.readUInt32LE(at)); // IQ2_XXS
      return out;
    });
    await expect((await create(service(), quant)).card).rejects.toThrow(
      /quant\.gguf: tensor 'blk\.0\.attn_q\.weight' has quantization type IQ2_XXS, which is not supported/,
    );
    expect(left()).toEqual([]);
  });

  it('Cancel during the import leaves nothing in the models folder', async () => {
    const r = await create(service(), blob, 'cancelled', 1);
    await expect(r.card).rejects.toMatchObject({ code: 'cancelled' });
    expect(r.progress.some((p) => p.step >= 1)).toBe(true);
    expect(left()).toEqual([]);
  }, 240_000);

  it('imports an Ollama blob with progress; the card shows family, size, quantization, context and template', async () => {
    const svc = service();
    const r = await create(svc, blob, 'tiny-2m');
    const card = await r.card;
    expect(r.progress.map((p) => p.step)).toEqual(expect.arrayContaining([0, 1, 2, 3, 4]));
    expect(card).toMatchObject({
      id: 'tiny-2m',
      family: 'llama',
      maxPositions: 256,
      chatTemplate: 'ChatML',
      hypernet: null,
      source: blob.split('/').at(-1),
    });
    expect(card.quantization).toMatch(/Q4_0|Q8_0|F16/);
    expect(card.bytes).toBeGreaterThan(0);
    expect(left()).toEqual(['tiny-2m']); // no staging folder beside it
    const list = await svc.list();
    expect(list.bundles.map((b) => b.id)).toEqual(['tiny-2m']);
  }, 480_000);
});
