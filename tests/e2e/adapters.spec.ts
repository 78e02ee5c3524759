// The Adapters page in Chromium against `pskills serve`: adapters made in the setup through the API
// (two imported PEFT folders that fit the tiny fixture bundle, a cat merge of them and two EMA steps)
// are listed with their lineage; one is exported as a PEFT folder that is then read back from disk,
// and a folder that cannot be written shows the API's error.
// Run: node --import tsx --test tests/e2e/adapters.spec.ts
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');

describe('adapters page in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let work: string;
  let imported: AdapterSummary[];
  let merged: AdapterSummary;
  /** EMA version 1 (the first import as the global adapter) and version 2 (the second merged in) */
  let ema1: AdapterSummary;
  let ema: AdapterSummary;

  const row = (id: string) => page.locator(`[data-testid="adapter-row"][data-adapter-id="${id}"]`);
  const panel = () => page.getByTestId('adapter-panel');
  const showing = (id: string) =>
    until(
      async () =>
        (await page
          .getByTestId('adapter-panel-id')
          .innerText()
          .catch(() => '')) === id,
      `the panel shows ${id}`,
    );

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-adapters-'));
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'engine.loadBundle', { dir: BUNDLE });
    imported = [];
    for (const seed of [1, 2]) {
      const dir = join(work, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      imported.push((await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter);
    }
    const ids = imported.map((a) => a.id);
    merged = (await apiCall<AdapterWritten>(host, 'adapters.merge', { ids, method: 'cat', weights: [1, 0.5] })).adapter;
    ema1 = (await apiCall<{ adapter: AdapterSummary }>(host, 'ema.update', { adapterId: ids[0] })).adapter;
    ema = (
      await apiCall<{ adapter: AdapterSummary }>(host, 'ema.update', { adapterId: ids[1], beta: 0.25, rankBudget: 6 })
    ).adapter;
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the sidebar opens the Adapters page, which lists every adapter', async () => {
    await page.goto(host.url);
    await page.getByTestId('nav-adapters').click();
    await page.getByTestId('adapter-table').waitFor();
    assert.equal(await page.getByTestId('adapter-row').count(), 5);
    assert.match(await page.getByTestId('adapter-count').innerText(), /^5 adapters$/);
    assert.equal(await page.getByTestId('nav-adapters').locator('.count').innerText(), '5');
    for (const a of imported) {
      assert.equal(await row(a.id).getAttribute('data-kind'), 'import');
      assert.equal(await row(a.id).getByTestId('adapter-rank').innerText(), '4');
    }
    assert.equal(await row(merged.id).getAttribute('data-kind'), 'merge');
    assert.equal(await row(merged.id).getByTestId('adapter-rank').innerText(), '8');
    assert.equal(await row(merged.id).getByTestId('adapter-source').innerText(), 'cat of 2 · weights 1, 0.5');
    assert.match(await row(ema1.id).getByTestId('adapter-source').innerText(), /first global version · β 1 · budget/);
    assert.equal(await row(ema.id).getAttribute('data-kind'), 'ema');
    assert.equal(await row(ema.id).getByTestId('adapter-rank').innerText(), '6');
    assert.match(await row(ema.id).getByTestId('adapter-source').innerText(), /global update · β 0\.25 · budget 6/);
    assert.equal(await row(merged.id).getByTestId('adapter-bundle').innerText(), 'tiny-random');
    await screenshot(page, 'adapters-01-list');
  });

  test('a merge shows its parents with their weights, and a parent what it was used by', async () => {
    await row(merged.id).click();
    await panel().waitFor();
    assert.equal(await page.getByTestId('adapter-panel-id').innerText(), merged.id);
    assert.ok(page.url().endsWith(`#/adapters/${merged.id}`));
    const parents = page.getByTestId('lineage-parent');
    assert.equal(await parents.count(), 2);
    assert.deepEqual(
      await parents.evaluateAll((els) => els.map((e) => e.getAttribute('data-adapter-id'))),
      imported.map((a) => a.id),
    );
    assert.match(await parents.nth(0).innerText(), /×1\s+\w+\s+import · r4/);
    assert.match(await parents.nth(1).innerText(), /×0\.5\s+\w+\s+import · r4/);
    assert.match(await page.getByTestId('facts-rank').innerText(), /^8 \/ /);
    assert.match(await page.getByTestId('facts-targets').innerText(), /^14 · 2 layers · q k v o gate up down$/);
    assert.match(await page.getByTestId('facts-norm').innerText(), /^\d/);
    await screenshot(page, 'adapters-02-lineage');

    await parents.nth(1).getByRole('link').click();
    await page.waitForURL(`**/#/adapters/${imported[1]!.id}`);
    await showing(imported[1]!.id); // the panel loads the adapter after the URL changes
    assert.equal(await page.getByTestId('lineage-parent').count(), 0);
    const children = await page
      .getByTestId('lineage-child')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-adapter-id')));
    assert.deepEqual([...children].sort(), [merged.id, ema.id].sort());
    await page.getByTestId('lineage-child').first().getByRole('link').click();
    await page.waitForURL(`**/#/adapters/${children[0]}`);
    await showing(children[0]!);
  });

  test('an EMA version names the previous global adapter and the adapter merged in', async () => {
    await row(ema.id).click();
    await page.waitForURL(`**/#/adapters/${ema.id}`);
    await showing(ema.id);
    const parents = page.getByTestId('lineage-parent');
    assert.equal(await parents.count(), 2);
    assert.match(await parents.nth(0).innerText(), new RegExp(`×0\\.75\\s+${ema1.id}\\s+previous global\\s+ema · r4`));
    assert.match(await parents.nth(1).innerText(), new RegExp(`×0\\.25\\s+${imported[1]!.id}\\s+merged in`));
  });

  test('exports the merge as a PEFT folder and shows the files written', async () => {
    await row(merged.id).click();
    await page.waitForURL(`**/#/adapters/${merged.id}`);
    await showing(merged.id);
    const suggested = await page.getByTestId('export-dir').inputValue();
    assert.ok(
      suggested.startsWith(host.dataDir) && suggested.endsWith(`adapter-${merged.id}`),
      `suggested ${suggested}`,
    );
    const out = join(work, 'exported', 'merged');
    await page.getByTestId('export-dir').fill(out);
    await page.getByTestId('export-run').click();
    await page.getByTestId('export-result').waitFor();
    assert.equal(await page.getByTestId('export-result-dir').innerText(), out);
    const files = await page.getByTestId('export-file').allInnerTexts();
    assert.deepEqual(files, ['adapter_config.json', 'adapter_model.safetensors', 'pskills.json']);
    for (const f of files) assert.ok(existsSync(join(out, f)), `${f} was written`);
    const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8')) as {
      r: number;
      peft_type: string;
    };
    assert.equal(config.r, 8);
    const sidecar = JSON.parse(readFileSync(join(out, 'pskills.json'), 'utf8')) as {
      adapter: string;
      lineage: unknown[];
    };
    assert.equal(sidecar.adapter, merged.key);
    assert.equal(sidecar.lineage.length, 2);
    await screenshot(page, 'adapters-03-exported');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });

  // Last: Chromium logs the expected HTTP errors of these calls as console errors.
  test('a folder that cannot be written shows the API error in the panel', async () => {
    const blocker = join(work, 'a-file');
    writeFileSync(blocker, 'not a folder');
    await page.getByTestId('export-dir').fill(join(blocker, 'out'));
    await page.getByTestId('export-run').click();
    const error = page.getByTestId('adapter-export').getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'invalid_input');
    assert.match(await error.innerText(), /Export failed: .*a-file/);
    assert.equal(await page.getByTestId('export-result').count(), 0);
    await screenshot(page, 'adapters-04-export-error');
  });

  test('an unknown adapter id shows not_found', async () => {
    await page.goto(`${host.origin}/#/adapters/abcdef999999`);
    const error = panel().getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'not_found');
    assert.match(await error.innerText(), /abcdef999999/);
  });
});
