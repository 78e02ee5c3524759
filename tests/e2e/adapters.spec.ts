// The Adapters page in Chromium against `pskills serve`: adapters made in the setup through the API
// (two imported PEFT folders that fit the tiny fixture bundle, a cat merge of them and two EMA steps)
// are listed with their lineage; one is exported as a PEFT folder that is then read back from disk,
// and a folder that cannot be written shows the API's error. A PEFT folder is imported from its path;
// Delete explains what depends on an adapter, deletes one nothing needs, and shows the studio's refusal
// when a dependent appeared after the dialog opened.
// Run: node --import tsx --test tests/e2e/adapters.spec.ts
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, apiStream, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

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
    merged = (await apiStream<AdapterWritten>(host, 'adapters.merge', { ids, method: 'cat', weights: [1, 0.5] }))
      .adapter;
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
    // The Size column holds the widest size formatBytes writes: measured in a copy of a row, removed after.
    const cut = await page.evaluate(`(() => {
      const row = document.querySelector('[data-testid="adapter-row"]');
      const copy = row.cloneNode(true);
      row.after(copy);
      const cell = copy.querySelector('[data-testid="adapter-size"]');
      cell.textContent = '1023.9 KiB';
      const cut = cell.scrollWidth > cell.clientWidth;
      copy.remove();
      return cut;
    })()`);
    assert.equal(cut, false, 'the Size column cuts "1023.9 KiB"');
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
    assert.match(await parents.nth(0).innerText(), /×1\s+\w+\s+imported · r4/);
    assert.match(await parents.nth(1).innerText(), /×0\.5\s+\w+\s+imported · r4/);
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
    assert.match(
      await parents.nth(0).innerText(),
      new RegExp(`×0\\.75\\s+${ema1.id}\\s+previous global\\s+global · r4`),
    );
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

  test('imports a PEFT folder from its path; the same folder again is found, a relative path is named', async () => {
    const dir = join(work, 'peft-3');
    await writeFixturePeft(dir, 3);
    await page.goto(`${host.origin}/#/adapters`);
    await page.getByTestId('adapter-import-open').click();
    await page.getByTestId('adapter-import-dir').fill('peft-3');
    await page.getByTestId('adapter-import-run').click();
    const error = page.getByTestId('adapter-import').getByTestId('error');
    await error.waitFor();
    assert.match(await error.innerText(), /peft-3 is not an absolute path/);

    await page.getByTestId('adapter-import-dir').fill(dir);
    await page.getByTestId('adapter-import-run').click();
    const result = page.getByTestId('adapter-import-result');
    await result.waitFor();
    assert.equal(await result.getAttribute('data-created'), 'true');
    const id = (await result.getByRole('link').innerText()).trim();
    await page.waitForURL(`**/#/adapters/${id}`);
    await showing(id);
    await until(async () => (await page.getByTestId('adapter-row').count()) === 6, 'the list shows the import');
    assert.equal(await row(id).getAttribute('data-kind'), 'import');
    await screenshot(page, 'adapters-05-import');

    await page.getByTestId('adapter-import-run').click();
    await until(async () => (await result.getAttribute('data-created').catch(() => null)) === 'false', 'found again');
    assert.equal(await page.getByTestId('adapter-row').count(), 6);
  });

  test('delete names what depends on an adapter and offers no Delete; an adapter nothing needs is deleted', async () => {
    await row(imported[0]!.id).click();
    await showing(imported[0]!.id);
    await page.getByTestId('adapter-delete').click();
    const dialog = page.getByTestId('adapter-delete-dialog');
    await dialog.getByTestId('adapter-delete-blocked').waitFor();
    const deps = await dialog
      .getByTestId('adapter-delete-dependents')
      .getByRole('link')
      .evaluateAll((els) => els.map((e) => e.textContent?.trim()));
    assert.ok(deps.includes(merged.id), `dependents ${deps.join(', ')}`);
    assert.equal(await dialog.getByTestId('adapter-delete-confirm').count(), 0);
    await screenshot(page, 'adapters-06-delete-blocked');
    await dialog.getByTestId('adapter-delete-cancel').click();
    await dialog.waitFor({ state: 'detached' });

    await row(ema1.id).click();
    await showing(ema1.id);
    await page.getByTestId('adapter-delete').click();
    assert.match(await dialog.getByTestId('adapter-delete-global').innerText(), /global adapter's version 1\b/);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    const fresh = await page
      .getByTestId('adapter-row')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-adapter-id')));
    const known = new Set([...imported, merged, ema1, ema].map((a) => a.id));
    const third = fresh.find((id) => id && !known.has(id))!;
    await row(third).click();
    await showing(third);
    await page.getByTestId('adapter-delete').click();
    assert.match(await dialog.getByTestId('adapter-delete-question').innerText(), /This cannot be undone/);
    await dialog.getByTestId('adapter-delete-confirm').click();
    await dialog.waitFor({ state: 'detached' });
    await page.waitForURL(/#\/adapters$/);
    await until(async () => (await page.getByTestId('adapter-row').count()) === 5, 'the row goes');
    assert.equal(await row(third).count(), 0);
    assert.equal((await apiCall<AdapterSummary[]>(host, 'adapters.list', {})).length, 5);
  });

  test('a relative export folder is named in the panel before anything is sent', async () => {
    await row(merged.id).click();
    await showing(merged.id);
    await page.getByTestId('export-dir').fill('relative/out');
    await page.getByTestId('export-run').click();
    const error = page.getByTestId('adapter-export').getByTestId('error');
    await error.waitFor();
    assert.match(await error.innerText(), /Export failed: relative\/out is not an absolute path/);
    assert.doesNotMatch(await error.innerText(), /“dir”/, "the API's field name is not shown");
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });

  // Last: Chromium logs the expected HTTP errors of these calls as console errors.
  test('a folder that cannot be written shows the API error in the panel', async () => {
    const blocker = join(work, 'a-file');
    writeFileSync(blocker, 'not a folder');
    await row(merged.id).click();
    await showing(merged.id);
    await page.getByTestId('export-dir').fill(join(blocker, 'out'));
    await page.getByTestId('export-run').click();
    const error = page.getByTestId('adapter-export').getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'invalid_input');
    assert.match(await error.innerText(), /Export failed: .*a-file/);
    assert.equal(await page.getByTestId('export-result').count(), 0);
    await screenshot(page, 'adapters-04-export-error');
  });

  test('a dependent made after the dialog opened: the studio refuses and the dialog says why', async () => {
    const dir = join(work, 'peft-4');
    await writeFixturePeft(dir, 4);
    const late = (await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter;
    await page.goto(`${host.origin}/#/adapters/${late.id}`);
    await showing(late.id);
    await page.getByTestId('adapter-delete').click();
    const dialog = page.getByTestId('adapter-delete-dialog');
    await dialog.getByTestId('adapter-delete-question').waitFor();
    const child = (
      await apiStream<AdapterWritten>(host, 'adapters.merge', { ids: [late.id, imported[0]!.id], method: 'cat' })
    ).adapter;
    await dialog.getByTestId('adapter-delete-confirm').click();
    const error = dialog.getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'conflict');
    assert.match(
      await error.innerText(),
      new RegExp(`Not deleted: adapter ${late.id} is in the lineage of adapter ${child.id}`),
    );
    await screenshot(page, 'adapters-07-delete-refused');
    await dialog.getByTestId('adapter-delete-cancel').click();
    await row(child.id).waitFor(); // the refusal brought the list up to date
    assert.ok((await apiCall<AdapterSummary[]>(host, 'adapters.list', {})).some((a) => a.id === late.id));
  });

  test('an import the studio refuses shows its error', async () => {
    if (!(await page.getByTestId('adapter-import').isVisible())) await page.getByTestId('adapter-import-open').click();
    await page.getByTestId('adapter-import-dir').fill(join(work, 'no-such-peft'));
    await page.getByTestId('adapter-import-run').click();
    const error = page.getByTestId('adapter-import').getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'not_found');
    assert.match(await error.innerText(), /no-such-peft/);
  });

  test('an unknown adapter id shows not_found', async () => {
    await page.goto(`${host.origin}/#/adapters/abcdef999999`);
    const error = panel().getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'not_found');
    assert.match(await error.innerText(), /abcdef999999/);
  });
});
