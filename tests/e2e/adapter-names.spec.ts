// Adapters by name (docs/guide.md, "Adapter names"), in Chromium against `pskills serve` on the tiny
// fixture bundle: the Adapters table, the merge workbench's picker and picks, the global timeline and
// the Playground's adapter picker show each adapter's name with its hash second; a merge is named
// from its parts unless given a name; the side panel renames an adapter (its hash, copyable, stays).
// And the page's layout (docs/guide.md, "The Adapters page"): master–detail, the timeline in its own
// tab, the heatmap legend in numbers, help on the encoder and each merge method.
// Run: node --import tsx --test tests/e2e/adapter-names.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten } from '../../common/api/adapter-schemas';
import { shortDate } from '../../common/adapters/name';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, until, type Host, type Studio } from './harness';

const BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');

describe('adapters by name', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let work: string;
  let imported: AdapterSummary[];
  let merged: AdapterSummary;
  // Lists show the name with the day it was made (common/adapters/name.ts).
  const dated = (name: string, a: AdapterSummary) => `${name} · ${shortDate(a.createdAt)}`;
  const row = (id: string) => page.locator(`[data-testid="adapter-row"][data-adapter-id="${id}"]`);

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-names-'));
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'engine.loadBundle', { dir: BUNDLE });
    imported = [];
    for (const seed of [1, 2]) {
      const dir = join(work, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      imported.push((await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter);
    }
    await page.goto(host.url);
    await page.getByTestId('nav-adapters').click();
    await until(async () => (await page.getByTestId('adapter-row').count()) === 2, 'two adapters listed');
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the table shows each name with its hash second', async () => {
    for (const a of imported) {
      assert.equal(await row(a.id).getByTestId('adapter-name').innerText(), dated('imported PEFT adapter', a));
      assert.equal(await row(a.id).getByTestId('adapter-hash').innerText(), a.id);
    }
  });

  test('the merge workbench lists names; a typed name names the merge', async () => {
    await page.getByTestId('merge-open').click();
    const names = await page.getByTestId('merge-candidate-name').allInnerTexts();
    assert.deepEqual(
      names,
      imported.map((a) => dated('imported PEFT adapter', a)),
    );
    for (const a of imported)
      await page.locator(`[data-testid="merge-candidate"][data-adapter-id="${a.id}"]`).locator('input').check();
    assert.deepEqual(await page.getByTestId('merge-pick-name').allInnerTexts(), [
      'imported PEFT adapter',
      'imported PEFT adapter',
    ]);
    assert.equal(
      await page.getByTestId('merge-name').getAttribute('placeholder'),
      'imported PEFT adapter + imported PEFT adapter (cat)',
      'the default name, from the parts',
    );
    await page.getByTestId('merge-name').fill('review + pdf');
    await page.getByTestId('merge-save').click();
    await page.getByTestId('merge-saved').waitFor();
    merged = (await apiCall<AdapterSummary[]>(host, 'adapters.list')).find((a) => a.recipe.kind === 'merge')!;
    assert.equal(await page.getByTestId('merge-saved-link').innerText(), dated('review + pdf', merged));
    assert.equal(merged.name, 'review + pdf');
    await until(async () => (await row(merged.id).count()) === 1, 'the merge is listed');
    assert.equal(await row(merged.id).getByTestId('adapter-name').innerText(), dated('review + pdf', merged));
  });

  test('the side panel renames the adapter; its hash stays, with Copy', async () => {
    await row(merged.id).getByTestId('adapter-name').click();
    await page.getByTestId('adapter-panel-name').waitFor();
    assert.equal(await page.getByTestId('adapter-panel-name').innerText(), 'review + pdf');
    assert.equal(await page.getByTestId('adapter-panel-id').innerText(), merged.id);
    assert.equal(await page.getByTestId('adapter-panel-tier').innerText(), 'merge');
    assert.equal(await page.getByTestId('adapter-copy-hash').count(), 1);
    await page.getByTestId('adapter-rename').click();
    await page.getByTestId('adapter-rename-input').fill('two reviewers');
    await page.getByTestId('adapter-rename-save').click();
    await until(
      async () => (await row(merged.id).getByTestId('adapter-name').innerText()) === dated('two reviewers', merged),
      'the table follows the rename',
    );
    assert.equal(await page.getByTestId('adapter-panel-name').innerText(), 'two reviewers');
    const after = (await apiCall<AdapterSummary[]>(host, 'adapters.list')).find((a) => a.id === merged.id)!;
    assert.equal(after.key, merged.key, 'the rename leaves the key');
    assert.equal(after.tensorsSha256, merged.tensorsSha256);
    // Back to the name made from its recipe.
    await page.getByTestId('adapter-rename').click();
    await page.getByTestId('adapter-rename-reset').click();
    await until(
      async () => (await row(merged.id).getByTestId('adapter-name').innerText()) === dated('cat merge of 2', merged),
      'back to the made-up name',
    );
  });

  test('master–detail: the list stays beside the open adapter; charts have numbered legends; terms carry help', async () => {
    await page.goto(`${host.origin}/#/adapters/${merged.id}`);
    await page.getByTestId('adapter-panel-name').waitFor();
    const master = (await page.getByTestId('adapters-master').boundingBox())!;
    const detail = (await page.getByTestId('adapter-panel').boundingBox())!;
    assert.ok(master.x + master.width <= detail.x + 1, 'the detail is beside the list, not below it');
    assert.ok(Math.abs(master.y - detail.y) < 2, 'both start at the top');
    assert.equal(await page.getByTestId('global-timeline').count(), 0, 'the timeline is in its own tab');
    // The ‖ΔW‖ heatmap's legend says what its colours are worth: 0 and the largest norm.
    const heatmap = page.getByTestId('viz-heatmap-chart');
    await until(async () => (await heatmap.locator('svg text').count()) > 0, 'the heatmap draws');
    const words = await heatmap.locator('svg text').allTextContents();
    assert.ok(words.includes('0'), `the legend's low end: ${words.join(' ')}`);
    assert.ok(
      words.some((w) => /^\d+(\.\d+)?$/.test(w) && Number(w) > 0),
      `the legend's high end: ${words.join(' ')}`,
    );
    // One line of help for the encoder (the list's Source column) and each merge method.
    await page.goto(`${host.origin}/#/adapters`);
    assert.match((await page.getByTestId('help-encoder').first().getAttribute('title'))!, /hypernetwork/);
    // The workbench may still be open from the merge above.
    if ((await page.getByTestId('merge-workbench').count()) === 0) await page.getByTestId('merge-open').click();
    assert.match((await page.getByTestId('help-mergeCat').getAttribute('title'))!, /Use it by default/);
    assert.match((await page.getByTestId('help-mergeSvd').getAttribute('title'))!, /must stay small/);
    assert.match((await page.getByTestId('help-mergeLinear').getAttribute('title'))!, /baseline/);
    await page.getByTestId('adapters-tab-global').click();
    await page.getByTestId('global-timeline').waitFor();
    assert.match(page.url(), /#\/adapters\/global$/);
  });

  test('the global timeline names the adapter merged in', async () => {
    await apiCall(host, 'adapters.rename', { id: merged.id, name: 'two reviewers' });
    // Version 1 is the adapter itself (listed by its name); version 2 merges the renamed one in.
    await apiCall(host, 'ema.update', { adapterId: imported[0]!.id });
    await apiCall(host, 'ema.update', { adapterId: merged.id, beta: 0.5 });
    await page.getByTestId('adapters-tab-global').click();
    await page.getByTestId('adapters-refresh').click();
    const version = (n: number) => page.locator(`[data-testid="global-version"][data-version="${n}"]`);
    const source = version(2).getByTestId('global-source');
    await until(async () => /merged two reviewers/.test(await source.innerText().catch(() => '')), 'named source');
    assert.match(await source.innerText(), new RegExp(`^merged ${dated('two reviewers', merged)} ${merged.id}$`));
    // Each version's own adapter by its name too, the hash beside it.
    assert.match(await version(1).getByTestId('global-adapter').innerText(), /^\D.* [0-9a-f]{12}$/);
  });

  test("the Playground's adapter picker lists names, hashes last", async () => {
    await page.getByTestId('nav-playground').click();
    const options = page.getByTestId('adapter-select').locator('option');
    await until(async () => (await options.count()) >= 5, 'the picker lists the library');
    const labels = await page
      .getByTestId('adapter-select')
      .locator('option')
      .evaluateAll((els) => els.map((e) => e.textContent?.trim() ?? ''));
    assert.ok(
      labels.some((l) => l === `${dated('two reviewers', merged)} · rank 8 · ${merged.id}`),
      `the merge by name: ${labels.join(' | ')}`,
    );
    assert.ok(
      labels.some((l) => l === `${dated('imported PEFT adapter', imported[0]!)} · rank 4 · ${imported[0]!.id}`),
    );
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
