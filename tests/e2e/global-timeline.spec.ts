// The global adapter's timeline on the Adapters page, in Chromium against `pskills serve`: two EMA
// steps made through the API (two imported PEFT folders on the tiny fixture bundle) are listed
// newest first with β, rank and source, the current one marked; Rollback asks for a confirmation,
// Cancel does nothing, and Confirm appends a rollback version that becomes current.
// Run: node --import tsx --test tests/e2e/global-timeline.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, AdapterWritten, EmaHistory } from '../../common/api/adapter-schemas';
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
    assert.equal(await version(1).getByTestId('global-beta').innerText(), '1');
    assert.match(await version(2).getByTestId('global-source').innerText(), new RegExp(`merged ${imported[1]!.id}`));
    assert.match(await version(1).getByTestId('global-source').innerText(), new RegExp(`merged ${imported[0]!.id}`));
    assert.equal(await version(2).getByTestId('global-rollback').count(), 0, 'no rollback to the current version');
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

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
