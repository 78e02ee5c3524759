// The merge workbench and the merge visualizer on the Adapters page, in Chromium against
// `pskills serve`: three imported PEFT folders (two of rank 4, one of rank 2) on the tiny fixture
// bundle; the workbench searches and filters them, previews cat / svd merges (rank, norms, error
// against the exact sum, energy kept), refuses linear over unequal ranks, and saves a cat merge; the
// visualizer draws the saved merge's rank blocks by source, the ‖ΔW‖ heatmap, spectra, linear-vs-cat
// error, the sources' cosine matrix and the lineage graph, and an svd merge's spectra before/after.
// Run: node --import tsx --test tests/e2e/merge.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, apiStream, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');

describe('merge workbench and visualizer', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let work: string;
  let imported: AdapterSummary[];
  let saved: AdapterSummary;

  const candidates = () => page.getByTestId('merge-candidate');
  const candidate = (id: string) => page.locator(`[data-testid="merge-candidate"][data-adapter-id="${id}"]`);
  const pick = (id: string) => page.locator(`[data-testid="merge-pick"][data-adapter-id="${id}"]`);
  /** The chart has drawn: ECharts' SVG is in the box, with these words among its text. */
  const drawn = async (chart: Locator, ...words: string[]) => {
    await until(async () => (await chart.locator('svg').count()) > 0, 'the chart draws');
    const text = (await chart.locator('svg text').allTextContents()).join(' ');
    for (const w of words) assert.ok(text.includes(w), `chart text has "${w}": ${text.slice(0, 300)}`);
  };
  const previewed = async () => {
    await page.getByTestId('merge-preview').click();
    await page.getByTestId('merge-preview-result').waitFor();
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-merge-'));
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'engine.loadBundle', { dir: BUNDLE });
    imported = [];
    for (const [seed, opts] of [
      [1, {}],
      [2, {}],
      [3, { rank: 2, alpha: 2 }],
    ] as const) {
      const dir = join(work, `peft-${seed}`);
      await writeFixturePeft(dir, seed, opts);
      imported.push((await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter);
    }
    await page.goto(host.url);
    await page.getByTestId('nav-adapters').click();
    await until(async () => (await page.getByTestId('adapter-row').count()) === 3, 'three adapters listed');
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('search and kind filter narrow the candidates', async () => {
    await page.getByTestId('merge-open').click();
    await until(async () => (await candidates().count()) === 3, 'three candidates');
    await page.getByTestId('merge-search').fill(imported[2]!.id.slice(0, 8));
    await until(async () => (await candidates().count()) === 1, 'one candidate for an id prefix');
    await page.getByTestId('merge-search').fill('');
    await page.getByTestId('merge-kind').selectOption('merge');
    await until(async () => (await candidates().count()) === 0, 'no merges yet');
    await page.getByTestId('merge-kind').selectOption('all');
    await until(async () => (await candidates().count()) === 3, 'all again');
  });

  test('preview of a cat merge: rank Σrᵢ, the exact sum (error ≈ 0) and the cosine matrix; nothing stored', async () => {
    assert.equal(await page.getByTestId('merge-preview').isDisabled(), true, 'needs two picks');
    await candidate(imported[0]!.id).locator('input').check();
    await candidate(imported[1]!.id).locator('input').check();
    await pick(imported[1]!.id).getByTestId('merge-weight').fill('-0.5');
    await previewed();
    assert.equal(await page.getByTestId('preview-rank').innerText(), '8');
    assert.match(await page.getByTestId('preview-error').innerText(), /^0\.0000 %$/);
    assert.equal(
      await page.getByTestId('preview-norm').innerText(),
      await page.getByTestId('preview-exact').innerText(),
    );
    assert.match(await page.getByTestId('preview-linear').innerText(), /^\d+\.\d\d %$/);
    await drawn(page.getByTestId('preview-cosine-chart'), imported[0]!.id.slice(0, 8), '1');
    await drawn(page.getByTestId('preview-error-chart'));
    assert.equal((await apiCall<AdapterSummary[]>(host, 'adapters.list')).length, 3, 'a preview stores nothing');
  });

  test('svd preview shows the energy kept; linear over unequal ranks is refused before any call', async () => {
    await page.getByTestId('merge-method-svd').check();
    assert.equal(await page.getByTestId('merge-preview-result').count(), 0, 'a change clears the old preview');
    // The rank reads in a skill author's words; the term stays in its help.
    assert.equal(
      await page.getByLabel('Size of the merged adapter', { exact: true }).getAttribute('data-testid'),
      'merge-rank',
    );
    assert.match((await page.getByTestId('help-mergeRank').getAttribute('title'))!, /^Rank of the merged adapter/);
    await page.getByTestId('merge-rank').fill('3');
    await previewed();
    assert.equal(await page.getByTestId('preview-rank').innerText(), '3');
    const energy = Number.parseFloat(await page.getByTestId('preview-energy').innerText());
    const error = Number.parseFloat(await page.getByTestId('preview-error').innerText());
    assert.ok(energy > 0 && energy < 100, `energy kept ${energy} %`);
    // Eckart–Young: what the truncation keeps and what it misses add up to the whole.
    assert.ok(Math.abs(energy / 100 + (error / 100) ** 2 - 1) < 1e-3, `${energy} % kept, ${error} % error`);
    await screenshot(page, 'adapters-merge-01-svd-preview');

    await page.getByTestId('merge-method-linear').check();
    await candidate(imported[2]!.id).locator('input').check();
    assert.match(await page.getByTestId('merge-problem').innerText(), /linear needs equal ranks; these have 4, 4, 2/);
    assert.equal(await page.getByTestId('merge-save').isDisabled(), true);
    await candidate(imported[2]!.id).locator('input').uncheck();

    // Rehearsal practises each pick's skill: imported adapters have none, and it says which.
    await page.getByTestId('merge-method-cat').check();
    await page.getByLabel('Rehearse (steps, 0 = none)').fill('5');
    assert.match(await page.getByTestId('merge-problem').innerText(), /comes from no skill version/);
    assert.equal(await page.getByTestId('merge-save').isDisabled(), true);
    assert.match((await page.getByTestId('help-mergeRehearse').getAttribute('title'))!, /^Rehearse: after the merge/);
    await page.getByTestId('merge-rehearse').fill('0');
    assert.equal(await page.getByTestId('merge-problem').count(), 0);
  });

  test('Save stores the cat merge with its lineage; saving it again finds it', async () => {
    await page.getByTestId('merge-method-cat').check();
    await previewed();
    await page.getByTestId('merge-save').click();
    await page.getByTestId('merge-saved').waitFor();
    assert.match(
      await page.getByTestId('merge-saved').innerText(),
      /^Saved .+ \(cat\) · \d{1,2} [A-Z][a-z]{2}( \d{4})? [0-9a-f]{12} \(rank 8\)$/,
    );
    const list = await apiCall<AdapterSummary[]>(host, 'adapters.list');
    saved = list.find((a) => a.recipe.kind === 'merge')!;
    // No name typed: the merge is named from its parts.
    assert.equal(saved.name, 'imported PEFT adapter + imported PEFT adapter (cat)');
    assert.deepEqual(saved.lineage, [
      { id: imported[0]!.id, weight: 1 },
      { id: imported[1]!.id, weight: -0.5 },
    ]);
    await until(async () => (await page.getByTestId('adapter-row').count()) === 4, 'the list shows the merge');
    assert.equal(await page.getByTestId('preview-existing').innerText(), `${saved.id} (saving finds it)`);
    await screenshot(page, 'adapters-merge-02-saved');
    await page.getByTestId('merge-save').click();
    await until(
      async () => (await page.getByTestId('merge-saved').innerText()).startsWith('Already in the library'),
      'found stored',
    );
    assert.equal((await apiCall<AdapterSummary[]>(host, 'adapters.list')).length, 4);
  });

  test('the visualizer draws a cat merge: blocks by source, heatmap, spectrum, linear vs cat, cosine, lineage', async () => {
    await page.getByTestId('merge-open').click(); // close the workbench
    await page.locator(`[data-testid="adapter-row"][data-adapter-id="${saved.id}"]`).click();
    const viz = page.getByTestId('adapter-visualizer');
    await until(async () => (await viz.getAttribute('data-adapter-id')) === saved.id, 'the visualizer opens');
    await drawn(page.getByTestId('viz-blocks-chart'), `${imported[0]!.id} · w 1`, `${imported[1]!.id} · w -0.5`);
    await drawn(page.getByTestId('viz-heatmap-chart'), 'L0', 'L1', 'q', 'down');
    await drawn(page.getByTestId('viz-spectrum-chart'), 'energy kept at rank k');
    assert.match(await page.getByTestId('viz-linear-overall').innerText(), /^Over all targets: \d+\.\d\d %$/);
    await drawn(page.getByTestId('viz-linear-chart'), 'L0 q');
    await drawn(page.getByTestId('viz-cosine-chart'), imported[0]!.id.slice(0, 8), imported[1]!.id.slice(0, 8));
    await drawn(page.getByTestId('viz-lineage-chart'), imported[0]!.id, imported[1]!.id, saved.id, 'w -0.5');
    await screenshot(page, 'adapters-viz-01-cat-merge');
  });

  test('an svd merge shows spectra before and after truncation with the energy kept', async () => {
    const svd = (
      await apiStream<AdapterWritten>(host, 'adapters.merge', {
        ids: [imported[0]!.id, imported[2]!.id],
        method: 'svd',
        rank: 3,
      })
    ).adapter;
    await page.getByTestId('adapters-refresh').click();
    await page.locator(`[data-testid="adapter-row"][data-adapter-id="${svd.id}"]`).click();
    await until(
      async () => (await page.getByTestId('adapter-visualizer').getAttribute('data-adapter-id')) === svd.id,
      'the visualizer shows the svd merge',
    );
    await page.getByTestId('viz-energy').waitFor();
    assert.match(
      await page.getByTestId('viz-energy').innerText(),
      /^Rank 3 keeps \d+\.\d\d % of this target's energy \(Σσ²\), \d+\.\d\d % over all targets$/,
    );
    await drawn(page.getByTestId('viz-spectrum-chart'), 'before (exact sum)', 'after (truncated)');
    await page.getByTestId('viz-target').selectOption('L1 v');
    await drawn(page.getByTestId('viz-spectrum-chart'), 'before (exact sum)');
    assert.match(await page.getByTestId('viz-linear-none').innerText(), /equal ranks/);
    await screenshot(page, 'adapters-viz-02-svd-spectra');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
