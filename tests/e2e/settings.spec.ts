// The Settings page in Chromium against `pskills serve`: opened from the palette, every key of
// settings.get shown, a bad URL named before anything is sent, the changes stored through settings.set
// (read back through the API and after a reload), the API key masked and removable, and the theme
// choice shared with the sidebar's toggle.
// Run: node --import tsx --test tests/e2e/settings.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Settings } from '../../common/api/trajectory-schemas';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

describe('settings page in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const field = (key: string) => page.getByTestId(`set-${key}`);
  const stored = () => apiCall<Settings>(host, 'settings.get');
  const theme = () => page.evaluate('document.documentElement.dataset.theme');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await page.emulateMedia({ colorScheme: 'light' });
  });
  after(async () => {
    await studio?.close();
  });

  test('the palette opens Settings, which shows every setting with its stored value', async () => {
    await page.goto(host.url);
    await page.getByTestId('nav-library').waitFor();
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('settings');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/#/settings');
    await field('llmBaseUrl').waitFor();
    assert.equal(
      await page
        .getByTestId('nav-settings')
        .getAttribute('class')
        .then((c) => /active/.test(c ?? '')),
      true,
    );
    assert.equal(await field('storeTrajectories').isChecked(), true);
    assert.equal(await field('executionProvider').inputValue(), 'cpu');
    assert.equal(await field('llmBaseUrl').inputValue(), '');
    assert.equal(await field('llmModel').inputValue(), '');
    assert.equal(await field('llmApiKey').inputValue(), '');
    assert.equal(await field('llmApiKey').getAttribute('type'), 'password');
    assert.equal(await page.getByTestId('settings-datadir').innerText(), host.dataDir);
    assert.equal(await page.getByTestId('settings-save').isDisabled(), true);
  });

  test('a bad URL is named under its field and Save stays off; fixed, the changes are stored', async () => {
    await field('llmBaseUrl').fill('ftp://models.example');
    const error = page.getByTestId('setting-error');
    await error.waitFor();
    assert.match(await error.innerText(), /Base URL: an http:\/\/ or https:\/\/ URL/);
    assert.equal(await page.getByTestId('settings-save').isDisabled(), true);
    assert.match(await page.getByTestId('settings-note').innerText(), /needs a model name/);
    await screenshot(page, 'settings-02-invalid');

    await field('llmBaseUrl').fill('http://127.0.0.1:8080/v1');
    assert.equal(await error.count(), 0);
    await field('llmModel').fill('tiny-chat');
    await field('llmApiKey').fill('sk-e2e-secret');
    await field('storeTrajectories').uncheck();
    await field('executionProvider').selectOption('webgpu');
    assert.deepEqual(((await page.getByTestId('settings-page').getAttribute('data-changed')) ?? '').split(' ').sort(), [
      'executionProvider',
      'llmApiKey',
      'llmBaseUrl',
      'llmModel',
      'storeTrajectories',
    ]);
    await page.getByTestId('settings-save').click();
    await page.getByTestId('settings-saved').waitFor();
    assert.deepEqual(await stored(), {
      storeTrajectories: false,
      llmBaseUrl: 'http://127.0.0.1:8080/v1',
      llmModel: 'tiny-chat',
      llmApiKey: 'sk-e2e-secret',
      executionProvider: 'webgpu',
      maxMergeRank: 512,
    });
    assert.equal(await field('llmApiKey').inputValue(), '', 'the key is not put back in the field');
    assert.equal(await field('llmApiKey').getAttribute('data-stored'), 'true');
    await screenshot(page, 'settings');
  });

  test('after a reload the stored values are shown and the key can be removed', async () => {
    await page.reload();
    await field('llmModel').waitFor();
    await until(async () => (await field('llmModel').inputValue()) === 'tiny-chat', 'the model is read back');
    assert.equal(await field('llmBaseUrl').inputValue(), 'http://127.0.0.1:8080/v1');
    assert.equal(await field('executionProvider').inputValue(), 'webgpu');
    assert.equal(await field('storeTrajectories').isChecked(), false);
    assert.match((await field('llmApiKey').getAttribute('placeholder')) ?? '', /stored/);
    await page.getByTestId('set-llmApiKey-clear').click();
    await page.getByTestId('settings-save').click();
    await page.getByTestId('settings-saved').waitFor();
    assert.equal((await stored()).llmApiKey, null);
    assert.equal(await field('llmApiKey').getAttribute('data-stored'), 'false');
  });

  test('the theme choice is the sidebar toggle’s: each follows the other', async () => {
    await page.getByTestId('settings-theme-dark').check();
    assert.equal(await theme(), 'dark');
    assert.equal(await page.getByTestId('theme-toggle').getAttribute('data-theme-choice'), 'dark');
    await screenshot(page, 'settings-03-dark');
    await page.getByTestId('theme-light').click();
    assert.equal(await theme(), 'light');
    assert.equal(await page.getByTestId('settings-theme').getAttribute('data-theme-choice'), 'light');
    assert.equal(await page.getByTestId('settings-theme-light').isChecked(), true);
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
