// Labels people read are never cut, at 1280 × 800 and at 1920 × 1080, light and dark: the Library's
// descriptions (two lines, no Package column of dashes), the merge workbench's adapter names and
// facts and its preview's room, trajectory prompts (up to three lines), and an adapter's detail list. An element counts as
// cut when its text is wider or taller than its box (scrollWidth / scrollHeight beyond client size).
// Run: node --import tsx --test tests/e2e/layout.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import type { AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, type Host, type Studio } from './harness';

const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];
/** A prompt of the length people type (a very long one wraps over three lines, then its title has it all). */
const PROMPT = 'File badge 5521 under the brotro desk and say which mixtus records need a check today.';

/** The texts of the elements whose content overflows their box. */
async function cut(locator: Locator): Promise<string[]> {
  return locator.evaluateAll((els) =>
    els
      .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
      .map(
        (e) =>
          `${(e.textContent ?? '').trim().slice(0, 80)} (${e.clientWidth}×${e.clientHeight} px, text ${e.scrollWidth}×${e.scrollHeight})`,
      ),
  );
}

describe('no label people read is cut', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let work: string;
  let adapterId = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-layout-'));
    studio = await openStudio();
    ({ host, page } = studio);
    await apiCall(host, 'import.example', {});
    await apiCall(host, 'trajectories.add', {
      source: 'compare',
      skill: { name: 'brotro-mixtus' },
      condition: 'in_context',
      messages: [
        { role: 'user', content: PROMPT },
        { role: 'assistant', content: 'VESSOR: badge 5521' },
      ],
    });
    await apiCall(host, 'engine.loadBundle', { dir: join(ROOT, 'tests/fixtures/bundle-tiny') });
    for (const seed of [1, 2]) {
      const dir = join(work, `peft-${seed}`);
      await writeFixturePeft(dir, seed);
      adapterId = (await apiCall<AdapterWritten>(host, 'adapters.import', { dir })).adapter.id;
      await apiCall(host, 'adapters.rename', { id: adapterId, name: `brotro-mixtus and glistam-puxgu merged ${seed}` });
    }
    await page.goto(host.url);
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const size of SIZES)
    for (const theme of ['light', 'dark'] as const)
      test(`${size.width} × ${size.height}, ${theme}`, async () => {
        await page.setViewportSize(size);
        await page.emulateMedia({ colorScheme: theme });

        await page.goto(`${host.origin}/#/library`);
        await page.getByTestId('skill-desc').first().waitFor();
        assert.equal(await page.getByTestId('skill-desc').count(), 3);
        assert.deepEqual(await cut(page.getByTestId('skill-desc')), [], 'library descriptions');
        assert.equal(await page.locator('th.pkg').count(), 0, 'no Package column of dashes');

        await page.goto(`${host.origin}/#/trajectories`);
        await page.getByTestId('trajectory-row-prompt').first().waitFor();
        assert.deepEqual(await cut(page.getByTestId('trajectory-row-prompt')), [], 'trajectory prompts');

        await page.goto(`${host.origin}/#/adapters`);
        await page.getByTestId('merge-open').click();
        await page.getByTestId('merge-candidate-name').first().waitFor();
        assert.deepEqual(await cut(page.getByTestId('merge-candidate-name')), [], 'merge workbench names');
        assert.deepEqual(await cut(page.getByTestId('merge-candidate').locator('.muted')), [], 'merge workbench facts');
        // A preview's results get the room they need, not a strip: the workbench panel grows, and the
        // list under it keeps a few rows.
        for (const box of await page.getByTestId('merge-candidate').locator('input').all()) await box.check();
        await page.getByTestId('merge-preview').click();
        await page.getByTestId('merge-preview-result').waitFor();
        const tools = await page.locator('.tools').evaluate((e) => e.clientHeight);
        const list = await page.locator('.tools + .columns').evaluate((e) => e.clientHeight);
        assert.ok(tools >= size.height * 0.6, `the workbench is ${tools} px high in a ${size.height} px window`);
        assert.ok(list >= 150, `the list keeps ${list} px`);
        await page.getByTestId('merge-open').click();

        await page.goto(`${host.origin}/#/adapters/${adapterId}`);
        await page.getByTestId('adapter-panel-name').waitFor();
        assert.deepEqual(
          await cut(page.locator('[data-testid="adapter-facts"] dd:not(.truncate)')),
          [],
          'adapter detail list',
        );
      });
});
