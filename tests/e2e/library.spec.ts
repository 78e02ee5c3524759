// The Library in Chromium against `pskills serve` on the tiny hypernetwork fixture bundle: columns
// that sort both ways, ticking several skills and compiling them (progress, Cancel), the compiled
// column naming the bundle that holds an adapter for each skill's latest version, and Delete, which
// asks first and refuses, naming them, while adapters compiled from the skill exist.
// Run: node --import tsx --test tests/e2e/library.spec.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ENGLISH_BODY, skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');
const BUNDLE_ID = 'tiny-random-hyper';
/** Three versions, compiled by nobody: deletable. */
const NOTES = 'alpha-notes';
const REVIEW = 'beta-review';
const TEA = 'gamma-tea';
/** Hundreds of encoder chunks: its compile runs long enough to cancel. */
const LONG = 'zeta-long-guide';

describe('library in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const row = (name: string) => page.locator(`[data-testid="skill-row"][data-skill-name="${name}"]`);
  const order = () =>
    page.getByTestId('skill-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-skill-name')));
  const compiledCell = (name: string) => row(name).getByTestId('skill-compiled');
  const batchStatus = () => page.getByTestId('batch-panel').getAttribute('data-status');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    for (let v = 1; v <= 3; v++) {
      await apiCall(host, 'skills.save', {
        name: NOTES,
        content: skillMd({
          name: NOTES,
          description: 'Keep meeting notes.',
          body: `# Notes\n\nVersion ${v} of the notes skill.\n`,
        }),
      });
    }
    await apiCall(host, 'skills.save', { name: REVIEW, content: skillMd({ name: REVIEW }) });
    await apiCall(host, 'skills.save', {
      name: TEA,
      content: skillMd({
        name: TEA,
        description: 'Brew green tea.',
        body: '# Tea\n\nBrew green tea at 80 degrees for two minutes.\n',
      }),
    });
    await apiCall(host, 'skills.save', {
      name: LONG,
      content: skillMd({
        name: LONG,
        description: 'A very long guide.',
        body: Array(1000).fill(ENGLISH_BODY).join('\n'),
      }),
    });
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('columns sort both ways, and say how', async () => {
    await page.goto(host.url);
    await row(NOTES).waitFor();
    assert.deepEqual(await order(), [NOTES, REVIEW, TEA, LONG]);
    const sorted = async (dir: string) =>
      (await page.locator(`th[aria-sort="${dir}"]`).textContent())?.replace(/\s+/g, ' ').trim();
    assert.equal(await sorted('ascending'), 'Name ▲');
    await page.getByTestId('sort-name').click();
    assert.deepEqual(await order(), [LONG, TEA, REVIEW, NOTES]);
    assert.equal(await sorted('descending'), 'Name ▼');
    await page.getByTestId('sort-versions').click(); // numbers start biggest first; ties by name
    assert.deepEqual(await order(), [NOTES, REVIEW, TEA, LONG]);
    await page.getByTestId('sort-description').click();
    assert.deepEqual(await order(), [LONG, TEA, NOTES, REVIEW]);
    await page.getByTestId('sort-description').click();
    assert.deepEqual(await order(), [REVIEW, NOTES, TEA, LONG]);
    await page.getByTestId('sort-name').click();
    assert.deepEqual(await order(), [NOTES, REVIEW, TEA, LONG]);
    assert.equal(await compiledCell(REVIEW).innerText(), '—');
  });

  test('ticked skills compile one after another; the compiled column names the bundle', async () => {
    await row(REVIEW).getByTestId('skill-select').check();
    await row(TEA).getByTestId('skill-select').check();
    assert.equal(await page.getByTestId('selection-count').innerText(), '2 selected');
    await page.getByTestId('compile-selected').click();
    await until(
      async () => (await page.getByTestId('batch-panel').count()) > 0 && (await batchStatus()) === 'done',
      'the batch ends',
      120_000,
    );
    const items = page.getByTestId('batch-item');
    assert.deepEqual(
      await items.evaluateAll((els) =>
        els.map((e) => [e.getAttribute('data-skill-name'), e.getAttribute('data-status')]),
      ),
      [
        [REVIEW, 'done'],
        [TEA, 'done'],
      ],
    );
    assert.equal(await page.getByTestId('batch-status').innerText(), 'Compiled 2 of 2.');
    await until(
      async () => (await compiledCell(TEA).getAttribute('data-bundles')) === BUNDLE_ID,
      'the compiled column follows',
    );
    assert.equal(await compiledCell(REVIEW).innerText(), BUNDLE_ID);
    assert.equal(await compiledCell(NOTES).innerText(), '—');
    assert.equal(await page.getByTestId('nav-adapters').locator('.count').innerText(), '2');
    await screenshot(page, 'library-01-compiled');

    // Sorting by the compiled column puts them first.
    await page.getByTestId('sort-compiled').click();
    assert.deepEqual((await order()).slice(0, 2), [REVIEW, TEA]);
    await page.getByTestId('sort-name').click();

    // Again: the library already holds both adapters.
    await page.getByTestId('compile-selected').click();
    await until(
      async () =>
        (await batchStatus()) === 'done' && (await page.getByTestId('batch-status').innerText()).includes('already'),
      'the second batch ends',
    );
    assert.equal(await page.getByTestId('batch-status').innerText(), 'Compiled 2 of 2 (2 already in the library).');
    await page.getByTestId('selection-clear').click();
    assert.equal(await page.getByTestId('selection-bar').count(), 0);
    await page.getByTestId('batch-dismiss').click();
  });

  test('a new version leaves the adapter behind: the column says which version has one', async () => {
    await apiCall(host, 'skills.save', {
      name: TEA,
      content: skillMd({
        name: TEA,
        description: 'Brew green tea.',
        body: '# Tea\n\nBrew green tea at 75 degrees for three minutes.\n',
      }),
    });
    await page.reload();
    await row(TEA).waitFor();
    assert.equal(await compiledCell(TEA).innerText(), 'v1 only');
    assert.equal(await compiledCell(TEA).getAttribute('data-bundles'), '');
  });

  test('Cancel stops the running compile and skips the rest', async () => {
    await page.getByTestId('select-all').check();
    assert.equal(await page.getByTestId('selection-count').innerText(), '4 selected');
    await page.getByTestId('sort-name').click(); // Z→A: the long guide compiles first
    await page.getByTestId('compile-selected').click();
    await until(
      async () => /zeta-long-guide.*chunk [1-9]\d* of \d+/.test(await page.getByTestId('batch-status').innerText()),
      'the long compile shows progress',
      60_000,
    );
    await screenshot(page, 'library-02-compiling');
    await page.getByTestId('batch-cancel').click();
    await until(async () => (await batchStatus()) === 'done', 'the batch stops', 60_000);
    const statuses = await page
      .getByTestId('batch-item')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
    assert.deepEqual(statuses, ['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    assert.match(await page.getByTestId('batch-status').innerText(), /^Compiled 0 of 4, 4 cancelled\.$/);
    const adapters = await apiCall<Array<{ skill: { name: string } | null }>>(host, 'adapters.list', {});
    assert.ok(!adapters.some((a) => a.skill?.name === LONG), 'a cancelled compile stores nothing');
    await page.getByTestId('batch-dismiss').click();
    await page.getByTestId('selection-clear').click();
    await page.getByTestId('sort-name').click();
  });

  test('Delete asks first; Cancel keeps the skill, Delete removes it and every version', async () => {
    await row(NOTES).getByTestId('skill-delete').click();
    const dialog = page.getByTestId('delete-dialog');
    await dialog.waitFor();
    assert.match(
      await page.getByTestId('delete-question').innerText(),
      new RegExp(`Delete ${NOTES} and all 3 versions from the library\\?`),
    );
    await page.getByTestId('delete-cancel').click();
    await dialog.waitFor({ state: 'detached' });
    await row(NOTES).waitFor();
    await row(NOTES).getByTestId('skill-delete').click();
    await page.getByTestId('delete-confirm').click();
    await row(NOTES).waitFor({ state: 'detached' });
    await dialog.waitFor({ state: 'detached' });
    assert.match(await page.getByTestId('library-count').innerText(), /^3 skills/);
    const gone = await apiCall(host, 'skills.get', { name: NOTES }).catch((e: Error) => e.message);
    assert.match(String(gone), /not_found/);
  });

  test('Delete explains and refuses while adapters compiled from the skill exist', async () => {
    await row(REVIEW).getByTestId('skill-delete').click();
    await page.getByTestId('delete-blocked').waitFor();
    const adapters = await apiCall<Array<{ id: string; skill: { name: string } | null }>>(host, 'adapters.list', {});
    const id = adapters.find((a) => a.skill?.name === REVIEW)!.id;
    assert.match(
      await page.getByTestId('delete-dependents').innerText(),
      new RegExp(`${id}\\s+from v1, bundle ${BUNDLE_ID}`),
    );
    assert.equal(await page.getByTestId('delete-confirm').count(), 0, 'no Delete button');
    await screenshot(page, 'library-03-delete-refused');
    await page.getByTestId('delete-cancel').click();
    // The studio refuses too, whatever the page believes.
    const refused = await apiCall(host, 'skills.delete', { name: REVIEW }).catch((e: Error) => e.message);
    assert.match(
      String(refused),
      new RegExp(`conflict: skill "${REVIEW}" was not deleted: an adapter was compiled from it \\(${id} \\(v1\\)\\)`),
    );
    // Its adapter gone, the skill can go.
    await apiCall(host, 'adapters.delete', { id });
    await page.reload();
    await row(REVIEW).getByTestId('skill-delete').click();
    await page.getByTestId('delete-confirm').click();
    await row(REVIEW).waitFor({ state: 'detached' });
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
