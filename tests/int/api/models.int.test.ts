// The Models page's state (renderer/src/lib/models/models.ts ModelShelf) over the in-memory transport against
// the real services: the bundles the studio knows with their cards, making one active, the add form's
// refusals, and (with training/.venv) a bundle made from a tiny random Qwen2 checkpoint
// (training/tests/hf_tiny.py, as the `pskills bundle create` suite makes it) by the exporter the CLI
// runs, with progress per step, generating once active, and a cancelled create that leaves nothing.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelCreateProgress } from '../../../common/api/model-schemas';
import { trainingPython } from '../../../main/training-venv';
import { emptyForm, ModelShelf, type ModelsSnapshot } from '../../../renderer/src/lib/models/models';
import { HYPER_BUNDLE, TINY_BUNDLE } from '../compile/fixture';
import { memory, studioSuite, withStudio } from './transports';

const hasVenv = existsSync(trainingPython());

// The data folder holds the test's own folders too (a checkpoint, a folder without bundle.json).
const s = studioSuite(memory, 'pskills-models-', { defaultBundleDir: HYPER_BUNDLE });

const shelf = () => {
  const seen: ModelsSnapshot[] = [];
  return { shelf: new ModelShelf(s.api, (x) => seen.push(x)), seen };
};

describe('ModelShelf over the in-memory transport', () => {
  it('lists the default bundle with its card (active: the engine loads it first); activating another folder moves that', async () => {
    const { shelf: m } = shelf();
    await m.refresh();
    const first = m.snapshot.list!;
    expect(first.userDir).toBe(join(s.dataDir, 'bundles'));
    expect(first.bundles).toHaveLength(1);
    const card = first.bundles[0]!;
    const manifest = JSON.parse(readFileSync(join(HYPER_BUNDLE, 'bundle.json'), 'utf8')) as {
      id: string;
      architecture: { vocab: number; layers: number };
      lora: { targets: { module: string }[] };
      hypernet: { kind: string } | null;
    };
    expect(card).toMatchObject({
      dir: HYPER_BUNDLE,
      id: manifest.id,
      origin: 'default',
      active: true,
      vocab: manifest.architecture.vocab,
      layers: manifest.architecture.layers,
      loraTargets: manifest.lora.targets.map((t) => t.module),
      hypernet: manifest.hypernet?.kind ?? null,
      dtype: 'fp32',
    });
    const onDisk = readdirSync(HYPER_BUNDLE).reduce((sum, f) => sum + readFileSync(join(HYPER_BUNDLE, f)).length, 0);
    expect(card.bytes).toBe(onDisk);

    await m.activate(TINY_BUNDLE);
    expect(m.snapshot.error).toBeNull();
    const after = m.snapshot.list!;
    expect(after.bundles.map((b) => [b.dir, b.origin, b.active])).toEqual([
      [HYPER_BUNDLE, 'default', false],
      [TINY_BUNDLE, 'loaded', true],
    ]);
    expect((await s.api.engine.info({})).dir).toBe(TINY_BUNDLE);
    expect(m.snapshot.activating).toBeNull();
  });

  it('remembers the active bundle: a studio started again on the data folder loads it first', async () => {
    await withStudio(
      async (again) => {
        const list = await again.api.models.list({});
        expect(list.bundles.filter((b) => b.active).map((b) => b.dir)).toEqual([TINY_BUNDLE]);
        expect((await again.studio.engine.current()).dir).toBe(TINY_BUNDLE);
      },
      { dataDir: s.dataDir, defaultBundleDir: HYPER_BUNDLE },
    );
  });

  it('activating a folder without bundle.json fails with an error naming the file', async () => {
    const { shelf: m } = shelf();
    await m.activate(s.dataDir);
    expect(m.snapshot.error).toMatchObject({ code: 'not_found' });
    expect(m.snapshot.error!.message).toContain(join(s.dataDir, 'bundle.json'));
  });

  it('refuses a bad form before calling the studio, naming the field', async () => {
    const { shelf: m, seen } = shelf();
    await m.create({ ...emptyForm(), source: 'relative/dir' });
    expect(m.snapshot.createStatus).toBe('failed');
    expect(m.snapshot.createError!.message).toMatch(/^Checkpoint folder: must be an absolute path/);
    await m.create({ ...emptyForm(), source: '/x', targets: [] });
    expect(m.snapshot.createError!.message).toBe('LoRA targets: choose at least one LoRA target');
    await m.create({ ...emptyForm(), source: '/x', id: '../up' });
    expect(m.snapshot.createError!.message).toMatch(/^Bundle id: letters, digits/);
    expect(seen.some((s) => s.createStatus === 'running')).toBe(false);
  });

  it('the service refuses what the schema cannot see: a folder without config.json', async () => {
    const { shelf: m } = shelf();
    await m.create({ ...emptyForm(), source: s.dataDir });
    expect(m.snapshot.createError).toMatchObject({ code: 'not_found' });
    expect(m.snapshot.createError!.message).toBe(
      `source: ${join(s.dataDir, 'config.json')}: missing (not a Hugging Face checkpoint folder)`,
    );
    await expect(
      s.api.models.create({ source: s.dataDir, loraTargets: ['q', 'q'] }, () => {}).result,
    ).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('loraTargets'),
    });
  });
});

describe.skipIf(!hasVenv)('a bundle from a tiny random Qwen2 checkpoint (needs training/.venv)', () => {
  let hf: string;

  beforeAll(() => {
    hf = join(s.dataDir, 'tiny-qwen2');
    const made = spawnSync(trainingPython(), ['training/tests/hf_tiny.py', '--family', 'qwen2', '--out', hf], {
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    expect(made.status, made.stderr).toBe(0);
  }, 300_000);

  it('creates it with progress per exporter step, shows its card, makes it active and generates', async () => {
    const { shelf: m, seen } = shelf();
    await m.create({ ...emptyForm(), source: hf, dtype: 'fp16', targets: ['q', 'v', 'down'], hypernet: 'init' });
    expect(m.snapshot.createError).toBeNull();
    expect(m.snapshot.createStatus).toBe('done');
    const steps = seen.map((s) => s.progress).filter((p): p is ModelCreateProgress => p !== null);
    const distinct = [...new Map(steps.map((p) => [p.step, p])).values()];
    expect(distinct.map((p) => p.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(distinct.every((p) => p.steps === 5)).toBe(true);
    expect(distinct[2]!.message).toBe('exporting lm.onnx (fp16)');

    const card = m.snapshot.created!;
    const dir = join(s.dataDir, 'bundles', 'tiny-qwen2');
    const manifest = JSON.parse(readFileSync(join(dir, 'bundle.json'), 'utf8')) as {
      training_card: { parameters: number };
    };
    expect(card).toMatchObject({
      dir,
      id: 'tiny-qwen2',
      origin: 'user',
      active: false,
      family: 'qwen2',
      hidden: 64,
      layers: 2,
      vocab: 320,
      maxPositions: 512,
      loraTargets: ['q', 'v', 'down'],
      dtype: 'fp16',
      hypernet: 'perceiver',
      source: 'tiny-qwen2',
    });
    expect(card.parameters).toBe(manifest.training_card.parameters); // counted the way PyTorch counts
    expect(m.snapshot.list!.bundles.map((b) => b.dir)).toContain(dir);

    await m.activate(dir);
    expect(m.snapshot.list!.bundles.find((b) => b.dir === dir)!.active).toBe(true);
    const r = await s.api.engine.generate(
      { prompt: 'review the branch', maxTokens: 4, sampling: { temperature: 0 } },
      () => {},
    ).result;
    expect(r.completionTokens + (r.finishReason === 'eos' ? 1 : 0)).toBeGreaterThan(0);

    await m.create({ ...emptyForm(), source: hf });
    expect(m.snapshot.createError).toMatchObject({ code: 'conflict' });
    expect(m.snapshot.createError!.message).toMatch(/^id: a bundle named "tiny-qwen2" already exists/);
  }, 300_000);

  it("the exporter's own refusal reaches the page as its message: a folder without weights", async () => {
    const { shelf: m } = shelf();
    const bare = join(s.dataDir, 'no-weights');
    mkdirSync(bare);
    copyFileSync(join(hf, 'config.json'), join(bare, 'config.json'));
    await m.create({ ...emptyForm(), source: bare });
    expect(m.snapshot.createError).toMatchObject({ code: 'invalid_input' });
    expect(m.snapshot.createError!.message).toBe(
      `${join(bare, 'model.safetensors')}: missing, and no model.safetensors.index.json`,
    );
    expect(existsSync(join(s.dataDir, 'bundles', 'no-weights'))).toBe(false);
  }, 120_000);

  it('Cancel stops the exporter and leaves no folder behind', async () => {
    const ref: { m: ModelShelf | null } = { m: null };
    const m = new ModelShelf(s.api, (x) => {
      if (x.progress && x.progress.step >= 2 && !x.cancelling && x.createStatus === 'running') ref.m?.cancel();
    });
    ref.m = m;
    await m.create({ ...emptyForm(), source: hf, id: 'cancelled-one' });
    expect(m.snapshot.createStatus).toBe('cancelled');
    expect(m.snapshot.createError!.message).toMatch(/cancelled; nothing was written/);
    const left = readdirSync(join(s.dataDir, 'bundles'));
    expect(left.filter((f) => f.includes('cancelled-one'))).toEqual([]);
  }, 300_000);
});
