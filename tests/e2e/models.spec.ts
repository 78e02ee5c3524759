// The Models page in Chromium against `pskills serve`: opened from Ctrl+K, it shows the shipped
// default bundle's card; the add form names a bad field before sending anything; and (with
// training/.venv) a tiny random Qwen2 checkpoint (training/tests/hf_tiny.py) becomes a bundle with
// progress, its card shows the options chosen, and Make active loads it into the engine.
// Run: node --import tsx --test tests/e2e/models.spec.ts
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { EngineInfo } from '../../common/api/engine-schemas';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const PYTHON = join(ROOT, 'training/.venv/bin/python');
const hasVenv = existsSync(PYTHON);

describe('models page', { timeout: 400_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let tmp: string;

  const card = (id: string) => page.locator(`[data-testid="model-card"][data-id="${id}"]`);
  const field = (id: string, label: string) => card(id).locator(`dd[data-field="${label}"]`).innerText();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-e2e-models-'));
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await page.goto(host.url);
  });

  after(async () => {
    await studio?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('Ctrl+K opens the Models page; the shipped default bundle has its card', async () => {
    await page.getByTestId('nav-library').waitFor();
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('models');
    assert.equal(await page.getByTestId('palette-option').first().getAttribute('data-command'), 'go:models');
    await page.keyboard.press('Enter');
    await until(async () => page.url().endsWith('#/models'), 'the Models page opens');
    await until(
      async () => /\bactive\b/.test((await page.getByTestId('nav-models').getAttribute('class')) ?? ''),
      'the Models link is marked active',
    );
    await until(async () => (await page.getByTestId('model-card').count()) >= 1, 'a card');
    const first = page.getByTestId('model-card').first();
    const id = (await first.getAttribute('data-id'))!;
    assert.match(await first.innerText(), /shipped/);
    assert.equal(await field(id, 'Weights'), 'fp32');
    assert.match(await field(id, 'Base model'), /^llama/);
  });

  test('the add form names the field it refuses, before anything is sent', async () => {
    await page.getByTestId('model-source').fill('relative/folder');
    await page.getByTestId('model-create').click();
    const error = page.getByTestId('model-add').getByTestId('error');
    await error.waitFor();
    assert.match(await error.innerText(), /Checkpoint folder: .*must be an absolute path/);
    await page.getByTestId('model-source').fill(tmp);
    await page.getByTestId('model-create').click();
    await until(
      async () => /config\.json: missing/.test(await error.innerText()),
      'the studio says the folder has no config.json',
    );
  });

  test(
    'a Hugging Face folder becomes a bundle with progress; its card shows the options; Make active loads it',
    {
      skip: hasVenv ? false : 'needs training/.venv',
    },
    async () => {
      const hf = join(tmp, 'tiny-qwen2');
      const made = spawnSync(PYTHON, ['training/tests/hf_tiny.py', '--family', 'qwen2', '--out', hf], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, OMP_NUM_THREADS: '1' },
      });
      assert.equal(made.status, 0, made.stderr);

      await page.getByTestId('model-source').fill(hf);
      await page.getByTestId('model-dtype').selectOption('fp16');
      await page.getByTestId('model-target-k').uncheck();
      await page.getByTestId('model-target-o').uncheck();
      await page.getByTestId('model-create').click();
      await page.getByTestId('model-progress').waitFor();
      assert.equal(await page.getByTestId('nav-models-running').count(), 1);
      await page.getByTestId('model-created').waitFor({ timeout: 240_000 });
      assert.match(await page.getByTestId('model-created').innerText(), /Created tiny-qwen2/);

      await card('tiny-qwen2').waitFor();
      assert.equal(await field('tiny-qwen2', 'Base model'), 'qwen2 (from tiny-qwen2)');
      assert.equal(await field('tiny-qwen2', 'Weights'), 'fp16');
      assert.equal(await field('tiny-qwen2', 'LoRA targets'), 'q, v, gate, up, down (r 8, α 16)');
      assert.equal(await field('tiny-qwen2', 'Vocabulary'), '320');
      assert.equal(await field('tiny-qwen2', 'Context'), '512 tokens');
      assert.match(await field('tiny-qwen2', 'Hypernetwork'), /^none/);
      assert.match(await card('tiny-qwen2').innerText(), /made here/);
      await screenshot(page, 'models');

      await card('tiny-qwen2').getByTestId('model-activate').click();
      await card('tiny-qwen2').getByTestId('model-active').waitFor();
      assert.equal(await page.getByTestId('model-active').count(), 1);
      const info = await apiCall<EngineInfo>(host, 'engine.info');
      assert.deepEqual([info.id, info.architecture?.family], ['tiny-qwen2', 'qwen2']);
      assert.deepEqual(problems, []);
    },
  );
});
