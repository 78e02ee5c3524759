// The renderer half of the Electron close guard, in Chromium against `pskills serve`: the skill
// view reports which skill has unsaved text through window.studioWindow (the preload's bridge under
// Electron, a recording stand-in here), so main can ask before the window closes. Main's half (the
// native dialog) is unit-tested in tests/unit/api/close-guard.test.ts; no Electron binary runs here.
// Run: node --import tsx --test tests/e2e/close-guard.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, until, type Host, type Studio } from './harness';

const SKILL = 'review-prs';

describe('close guard: the renderer reports unsaved text to the window', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  // Strings, not functions: tsx's transform would add helpers the page does not have.
  const reports = () => page.evaluate<Array<string | null>>('window.__unsaved');
  const last = async () => (await reports()).at(-1);

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', { name: SKILL, content: skillMd({ name: SKILL }) });
    await page.addInitScript(
      'window.__unsaved = []; window.studioWindow = { setUnsaved: (s) => window.__unsaved.push(s) };',
    );
  });

  after(async () => {
    await studio?.close();
  });

  test('typing reports the skill, saving reports nothing unsaved, leaving the view clears it', async () => {
    await page.goto(host.url); // the page moves the launch token to sessionStorage
    await page.getByTestId('skill-table').waitFor();
    await page.goto(`${host.origin}/#/skill/${SKILL}/edit`);
    const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
    await editor.waitFor();
    assert.notEqual(await last(), SKILL, 'nothing unsaved before typing');
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('Typed but not saved yet.');
    await page.getByTestId('editor-status').getByText('unsaved changes').waitFor();
    await until(async () => (await last()) === SKILL, 'the unsaved skill is reported');

    await until(async () => await page.getByTestId('editor-save').isEnabled(), 'the text validates');
    await page.getByTestId('editor-save').click();
    await until(async () => (await last()) === null, 'saved: nothing unsaved');

    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' More.');
    await until(async () => (await last()) === SKILL, 'unsaved again');
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-discard').click();
    await page.getByTestId('skill-table').waitFor();
    await until(async () => (await last()) === null, 'left the editor: nothing unsaved');
  });

  test('unsaved tests on the Tests tab are reported too, and cleared when discarded', async () => {
    await page.goto(`${host.origin}/#/skill/${SKILL}/tests`);
    await page.getByTestId('tests-empty').waitFor();
    assert.equal(await last(), null, 'nothing unsaved before an edit');
    await page.getByTestId('tests-add').click();
    await until(async () => (await last()) === `${SKILL} tests`, 'the unsaved tests are reported');
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-discard').click();
    await page.getByTestId('skill-table').waitFor();
    await until(async () => (await last()) === null, 'discarded and left: nothing unsaved');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
