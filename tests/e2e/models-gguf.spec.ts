// GGUF import on the Models page in Chromium against `pskills serve` with a temp HOME that holds fake
// LM Studio (~/.lmstudio/models) and Ollama (~/.ollama/models: manifest + blob) folders, each with a
// tiny random GGUF the test writes (training/tests/gguf_tiny.py): both are listed with their facts; a
// truncated file picked by path is refused naming its tensor; an import cancelled midway leaves
// nothing; the LM Studio one becomes a bundle whose card shows family, size, quantization, context and
// chat template; made active, its skill page says Instant is unavailable and why, and compare shows
// No skill and In context only.
// Run: node --import tsx --test tests/e2e/models-gguf.spec.ts
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const PYTHON = join(ROOT, 'training/.venv/bin/python');
const hasVenv = existsSync(PYTHON);
const SKILL = 'greet-gguf';

describe('GGUF import on the Models page', { timeout: 600_000, skip: hasVenv ? false : 'needs training/.venv' }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let tmp: string;
  let home: string;

  const found = (app: string) => page.locator(`[data-testid="local-model"][data-app="${app}"]`);
  const card = (id: string) => page.locator(`[data-testid="model-card"][data-id="${id}"]`);
  const field = (id: string, label: string) => card(id).locator(`dd[data-field="${label}"]`).innerText();
  const bundlesLeft = () => {
    const dir = join(host.dataDir, 'bundles');
    return existsSync(dir) ? readdirSync(dir).filter((n) => n !== 'active.json') : [];
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pskills-e2e-gguf-'));
    home = join(tmp, 'home');
    const gguf = join(tmp, 'tiny.gguf');
    const made = spawnSync(PYTHON, ['training/tests/gguf_tiny.py', '--out', gguf], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    const lms = join(home, '.lmstudio', 'models', 'tiny-org', 'Tiny-GGUF');
    mkdirSync(lms, { recursive: true });
    copyFileSync(gguf, join(lms, 'tiny.Q8_0.gguf'));
    const bytes = readFileSync(gguf);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const models = join(home, '.ollama', 'models');
    mkdirSync(join(models, 'blobs'), { recursive: true });
    writeFileSync(join(models, 'blobs', `sha256-${digest}`), bytes);
    const manifest = join(models, 'manifests', 'registry.ollama.ai', 'library', 'tiny', '2m');
    mkdirSync(join(manifest, '..'), { recursive: true });
    writeFileSync(
      manifest,
      JSON.stringify({ layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}` }] }),
    );
    writeFileSync(join(tmp, 'cut.gguf'), bytes.subarray(0, Math.floor(bytes.length * 0.6)));

    studio = await openStudio(undefined, { env: { ...process.env, HOME: home, OMP_NUM_THREADS: '1' } });
    ({ host, page, problems } = studio);
    await page.goto(`${host.url}`);
    await page.getByTestId('nav-library').waitFor();
    await page.goto(`${host.origin}/#/models`);
  });

  after(async () => {
    await studio?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  test('lists the GGUFs in the LM Studio and Ollama folders with their facts', async () => {
    await page.getByTestId('local-models').waitFor();
    await found('lmstudio').waitFor();
    assert.equal(await page.getByTestId('local-model').count(), 2);
    assert.equal(await found('lmstudio').getAttribute('data-label'), 'tiny-org/Tiny-GGUF/tiny.Q8_0.gguf');
    assert.equal(await found('ollama').getAttribute('data-label'), 'tiny:2m');
    const facts = await found('ollama').getByTestId('local-model-facts').innerText();
    assert.match(facts, /^llama · 115\.0 K parameters · Q8_0 · 256 context · ChatML template · 149\.6 KiB$/);
  });

  test('a truncated file picked by path is refused, naming the tensor', async () => {
    await page.getByTestId('model-kind-gguf').check();
    await page.getByTestId('model-source').fill(join(tmp, 'cut.gguf'));
    await page.getByTestId('model-create').click();
    const error = page.getByTestId('model-add').getByTestId('error');
    await error.waitFor();
    assert.match(await error.innerText(), /cut\.gguf: truncated: tensor '[^']+' ends at byte/);
    assert.deepEqual(bundlesLeft(), []);
  });

  test('Cancel during an import leaves nothing in the models folder', async () => {
    await found('ollama').getByTestId('local-model-import').click();
    await page.getByTestId('model-progress').waitFor();
    await until(
      async () => /Step [1-9]/.test(await page.getByTestId('model-progress').innerText()),
      'the importer runs',
      60_000,
    );
    await page.getByTestId('model-cancel').click();
    await page.getByTestId('model-cancelled').waitFor({ timeout: 60_000 });
    assert.deepEqual(bundlesLeft(), []);
  });

  test('an LM Studio GGUF becomes a bundle; its card shows family, size, quantization, context and template', async () => {
    await found('lmstudio').getByTestId('local-model-import').click();
    await page.getByTestId('model-progress').waitFor();
    await page.getByTestId('model-created').waitFor({ timeout: 400_000 });
    const id = 'tiny-org-Tiny-GGUF-tiny.Q8_0';
    await card(id).waitFor();
    assert.equal(await field(id, 'Base model'), 'llama (from tiny.Q8_0.gguf)');
    assert.equal(await field(id, 'Parameters'), '115.0 K');
    assert.match(await field(id, 'Quantization'), /Q8_0.*\(dequantized to fp32\)$/);
    assert.equal(await field(id, 'Context'), '256 tokens');
    assert.equal(await field(id, 'Chat template'), 'ChatML');
    assert.match(await field(id, 'Size on disk'), /\d/);
    assert.match(await field(id, 'Hypernetwork'), /^none: Instant is unavailable/);
    assert.deepEqual(bundlesLeft(), [id]);
    await screenshot(page, 'models-gguf');

    await card(id).getByTestId('model-activate').click();
    await card(id).getByTestId('model-active').waitFor({ timeout: 60_000 });
  });

  test('on that bundle the skill page says Instant is unavailable, and compare shows No skill and In context', async () => {
    await apiCall(host, 'skills.save', {
      name: SKILL,
      content: `---\nname: ${SKILL}\ndescription: Greets.\n---\n# Greet\n\nAlways answer "hello".\n`,
    });
    await page.goto(`${host.origin}/#/skill/${SKILL}/compare`);
    await page.getByTestId('skill-lab').waitFor();
    await page.getByTestId('instant-unavailable').waitFor({ timeout: 60_000 });
    assert.match(await page.getByTestId('instant-unavailable').innerText(), /has no hypernetwork/);
    assert.ok(await page.getByTestId('mode-instant').isDisabled());
    await until(
      async () =>
        (
          await page
            .getByTestId('compare-column')
            .evaluateAll((els) => els.map((e) => e.getAttribute('data-condition')))
        ).join() === 'none,in_context',
      'compare shows the two columns this bundle can run',
    );
    assert.deepEqual(problems, []);
  });
});
