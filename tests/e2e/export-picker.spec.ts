// Choosing the export folder with the native picker. Under Electron the preload's
// window.studioWindow.pickPath opens dialog.showOpenDialog (main/electron/pickers.ts, kind
// export-folder); Chromium here has no Electron, so an init script stands in for that one bridge
// function and returns the folder a person would have chosen. Everything after it is real: the form
// fills the field, adapters.export writes the PEFT folder on disk. Without the bridge (a browser tab
// on the web host) there is no Choose button and the path field is the way in. A folder holding an
// earlier export is replaced only after "Replace existing" is ticked (docs/security.md).
// Run: node --import tsx --test tests/e2e/export-picker.spec.ts
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AdapterWritten } from '../../common/api/adapter-schemas';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, until, type Studio } from './harness';

describe('adapter export with the native folder picker', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let work: string;
  let id: string;
  let other: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-export-pick-'));
    studio = await openStudio();
    await apiCall(studio.host, 'engine.loadBundle', { dir: join(ROOT, 'tests/fixtures/bundle-tiny') });
    await writeFixturePeft(join(work, 'peft'), 3);
    id = (await apiCall<AdapterWritten>(studio.host, 'adapters.import', { dir: join(work, 'peft') })).adapter.id;
    await writeFixturePeft(join(work, 'peft-2'), 7, { rank: 2 });
    other = (await apiCall<AdapterWritten>(studio.host, 'adapters.import', { dir: join(work, 'peft-2') })).adapter.id;
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('a browser tab has no Choose button; the path field stays', async () => {
    const { page, host } = studio!;
    await page.goto(`${host.url}#/adapters/${id}`);
    await page.getByTestId('export-dir').waitFor();
    assert.equal(await page.getByTestId('export-browse').count(), 0);
  });

  test('Choose… asks the bridge for an export folder and the export writes there', async () => {
    const { browser, host } = studio!;
    const chosen = join(work, 'chosen-by-dialog');
    const context = await browser.newContext({ viewport: { width: 1360, height: 840 } });
    try {
      await context.addInitScript(
        `window.__picks = []; window.studioWindow = { setUnsaved() {}, pickPath: async (kind) => { window.__picks.push(kind); return ${JSON.stringify(chosen)}; } };`,
      );
      const page = await context.newPage();
      await page.goto(`${host.url}#/adapters/${id}`);
      await page.getByTestId('export-browse').click();
      await until(
        async () => (await page.getByTestId('export-dir').inputValue()) === chosen,
        'the field shows the choice',
      );
      assert.deepEqual(await page.evaluate('window.__picks'), ['export-folder']);
      await page.getByTestId('export-run').click();
      await page.getByTestId('export-result').waitFor();
      assert.equal(await page.getByTestId('export-result-dir').innerText(), chosen);
      assert.ok(existsSync(join(chosen, 'adapter_model.safetensors')));
      const config = JSON.parse(readFileSync(join(chosen, 'adapter_config.json'), 'utf8')) as { r: number };
      assert.equal(config.r, 4);
    } finally {
      await context.close();
    }
  });

  test('a cancelled dialog leaves the field as it was', async () => {
    const { browser, host } = studio!;
    const context = await browser.newContext({ viewport: { width: 1360, height: 840 } });
    try {
      await context.addInitScript(
        'window.__picks = []; window.studioWindow = { setUnsaved() {}, pickPath: async (kind) => { window.__picks.push(kind); return null; } };',
      );
      const page = await context.newPage();
      await page.goto(`${host.url}#/adapters/${id}`);
      await page.getByTestId('export-dir').fill('/typed/by/hand');
      await page.getByTestId('export-browse').click();
      await until(async () => ((await page.evaluate('window.__picks.length')) as number) === 1, 'the dialog was asked');
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
      assert.equal(await page.getByTestId('export-dir').inputValue(), '/typed/by/hand');
    } finally {
      await context.close();
    }
  });

  test('a folder with an earlier export is refused until "Replace existing" is ticked', async () => {
    const { page, host } = studio!;
    const dir = join(work, 'exported-twice');
    // Only the hash changes between adapters: wait until the panel is the adapter's, or the click exports
    // the one shown before.
    const open = async (adapter: string) => {
      await page.goto(`${host.url}#/adapters/${adapter}`);
      await page
        .locator(`[data-testid="adapter-panel"][data-adapter-id="${adapter}"] [data-testid="adapter-export"]`)
        .waitFor();
    };
    await open(id);
    await page.getByTestId('export-dir').fill(dir);
    assert.equal(await page.getByTestId('export-overwrite').count(), 0, 'a new folder needs no choice');
    await page.getByTestId('export-run').click();
    // The page may still show the last test's result: wait for this export's files, not the element.
    await until(async () => existsSync(join(dir, 'adapter_config.json')), 'the export is written');
    assert.equal(readConfig(dir).r, 4);

    // Another adapter to the same folder: refused, the earlier export untouched, the choice offered.
    await open(other);
    await page.getByTestId('export-dir').fill(dir);
    await page.getByTestId('export-run').click();
    await until(
      async () => (await page.getByTestId('adapter-export').getAttribute('data-status')) === 'failed',
      'the export is refused',
    );
    assert.match(await page.getByTestId('adapter-export').innerText(), /earlier adapter export; not overwritten/);
    assert.equal(readConfig(dir).r, 4);
    const replace = page.getByTestId('export-overwrite');
    assert.equal(await replace.isChecked(), false);

    await replace.check();
    await page.getByTestId('export-run').click();
    await until(async () => readConfig(dir).r === 2, 'the second adapter replaced the first');
    // The choice is one-shot: the next export to this folder asks again (the files land before the page
    // hears the answer, so wait for the page).
    await until(async () => !(await page.getByTestId('export-overwrite').isChecked()), 'the choice is cleared');
    // Typing another folder hides it.
    await page.getByTestId('export-dir').fill(join(work, 'somewhere-new'));
    assert.equal(await page.getByTestId('export-overwrite').count(), 0);
  });
});

function readConfig(dir: string): { r: number } {
  return JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8')) as { r: number };
}
