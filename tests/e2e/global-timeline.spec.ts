// The global adapter's timeline on the Adapters page, in Chromium against `pskills serve`: two EMA
// steps made through the API (two imported PEFT folders on the tiny fixture bundle) are listed
// newest first with β, rank and source, the current one marked; Rollback asks for a confirmation,
// Cancel does nothing, and Confirm appends a rollback version that becomes current. Update merges a
// chosen adapter in with a chosen β, and two ticked versions are compared by cosine and norms.
// Run: node --import tsx --test tests/e2e/global-timeline.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten, EmaHistory } from '../../common/api/adapter-schemas';
import { shortDate } from '../../common/adapters/name';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');

describe('global adapter timeline', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let work: string;
  let imported: AdapterSummary[];

  const versions = () => page.getByTestId('global-version');
  const version = (n: number) => page.locator(`[data-testid="global-version"][data-version="${n}"]`);

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-global-'));
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await page.goto(host.url);
    await page.getByTestId('nav-adapters').click();
    await page.getByTestId('adapters-tab-global').click();
    await page.getByTestId('global-no-bundle').waitFor(); // no bundle: nothing is loaded for the page
    await apiCall(host, 'engine.loadBundle', { dir: BUNDLE });
    imported = [];
    for (const seed of [1, 2]) {
      const dir = join(work, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      imported.push((await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter);
    }
    await apiCall(host, 'ema.update', { adapterId: imported[0]!.id });
    await apiCall(host, 'ema.update', { adapterId: imported[1]!.id, beta: 0.25, rankBudget: 6 });
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('lists the versions newest first with β, rank and source, the current one marked', async () => {
    await page.getByTestId('adapters-refresh').click();
    await until(async () => (await versions().count()) === 2, 'two versions');
    assert.deepEqual(await versions().evaluateAll((els) => els.map((e) => e.getAttribute('data-version'))), ['2', '1']);
    assert.equal(await version(2).getByTestId('global-current').count(), 1);
    assert.equal(await version(1).getByTestId('global-current').count(), 0);
    assert.equal(await version(2).getByTestId('global-beta').innerText(), '0.25');
    assert.equal(await version(2).getByTestId('global-rank').innerText(), '6');
    assert.equal(await version(1).getByTestId('global-beta').innerText(), '1 · first');
    // The source by its name, the hash beside it.
    assert.match(
      await version(2).getByTestId('global-source').innerText(),
      new RegExp(`^merged imported PEFT adapter · ${shortDate(imported[1]!.createdAt)} ${imported[1]!.id}$`),
    );
    assert.match(await version(1).getByTestId('global-source').innerText(), new RegExp(`merged .+ ${imported[0]!.id}`));
    assert.equal(await version(2).getByTestId('global-rollback').count(), 0, 'no rollback to the current version');
    // Steps made through the API by hand: each version's origin badge reads manual, its tooltip says why.
    for (const n of [1, 2]) {
      const origin = version(n).getByTestId('global-origin');
      assert.equal(await origin.innerText(), 'manual');
      assert.match((await origin.getAttribute('title'))!, /by hand/);
    }
  });

  test('Rollback asks first; Cancel keeps the history, Confirm appends a rollback that becomes current', async () => {
    await version(1).getByTestId('global-rollback').click();
    await version(1).getByTestId('global-cancel').click();
    assert.equal(await versions().count(), 2);
    assert.equal((await apiCall<EmaHistory>(host, 'ema.history')).versions.length, 2);

    await version(1).getByTestId('global-rollback').click();
    await version(1).getByTestId('global-confirm').click();
    await until(async () => (await versions().count()) === 3, 'a third version');
    assert.equal(await version(3).getByTestId('global-current').count(), 1);
    assert.equal(await version(3).getByTestId('global-source').innerText(), 'rollback to v1');
    const history = await apiCall<EmaHistory>(host, 'ema.history');
    assert.equal(history.versions[0]!.kind, 'rollback');
    assert.equal(history.versions[0]!.restoresVersion, 1);
    // v1's adapter is current again: rolling back to it would change nothing; v2 can be brought back.
    assert.equal(await version(1).getByTestId('global-rollback').count(), 0);
    assert.equal(await version(2).getByTestId('global-rollback').count(), 1);
    await screenshot(page, 'adapters-05-global-timeline');
  });

  test('Update merges the chosen adapter in with the chosen β as the next, current version', async () => {
    const form = page.getByTestId('global-update-form');
    assert.equal(await page.getByTestId('global-update').isDisabled(), true, 'nothing chosen yet');
    // Only adapters of the bundle, and no global versions: the two imports.
    const options = await form
      .locator('option')
      .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    assert.deepEqual(options.filter(Boolean).sort(), imported.map((a) => a.id).sort());
    await page.getByTestId('global-update-adapter').selectOption(imported[1]!.id);
    await page.getByTestId('global-update-beta').fill('1.5');
    assert.equal(
      await page.getByTestId('global-update-problem').innerText(),
      'the blend weight must be between 0 and 1',
    );
    assert.equal(await page.getByTestId('global-update').isDisabled(), true);
    await page.getByTestId('global-update-beta').fill('0.5');
    await page.getByTestId('global-update').click();
    await until(async () => (await versions().count()) === 4, 'a fourth version');
    assert.equal(await version(4).getByTestId('global-current').count(), 1);
    assert.equal(await version(4).getByTestId('global-beta').innerText(), '0.5');
    // the source names the merged adapter once the adapter list (refreshed after the history) has the new version's
    await until(
      async () =>
        new RegExp(`merged .+ ${imported[1]!.id}`).test(await version(4).getByTestId('global-source').innerText()),
      'the source names the merged adapter',
    );
    const history = await apiCall<EmaHistory>(host, 'ema.history');
    assert.deepEqual([history.versions[0]!.version, history.versions[0]!.beta], [4, 0.5]);
  });

  test('two ticked versions are compared by cosine and norms; a rollback equals the version it restored', async () => {
    assert.match(await page.getByTestId('global-compare-hint').innerText(), /Tick two versions/);
    await version(1).getByTestId('global-compare-pick').check();
    await version(3).getByTestId('global-compare-pick').check();
    await page.getByTestId('global-compare-cosine').waitFor();
    assert.equal(await page.getByTestId('global-compare-cosine').innerText(), '1.0000');
    assert.equal(await page.getByTestId('global-compare-distance').innerText(), '0');
    assert.equal(
      await page.getByTestId('global-compare-norm-a').innerText(),
      await page.getByTestId('global-compare-norm-b').innerText(),
    );
    await version(3).getByTestId('global-compare-pick').uncheck();
    await version(2).getByTestId('global-compare-pick').check();
    await until(
      async () =>
        (await page
          .getByTestId('global-compare-cosine')
          .innerText()
          .catch(() => '1.0000')) !== '1.0000',
      'v1 against v2',
    );
    const cosine = Number(await page.getByTestId('global-compare-cosine').innerText());
    assert.ok(cosine > 0 && cosine < 1, `cosine ${cosine}`);
    assert.ok(Number(await page.getByTestId('global-compare-distance').innerText()) > 0);
    await page.getByTestId('global-compare-chart').locator('svg').waitFor();
    await screenshot(page, 'adapters-06-global-update-compare');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
