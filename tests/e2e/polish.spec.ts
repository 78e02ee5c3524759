// Desktop polish in Chromium against `pskills serve`: the dark theme following the OS (and the toggle
// overriding it, kept across a reload, Monaco following), the command palette (Ctrl+K, filtering,
// keyboard, opening a skill, the shortcut list, Ctrl+K inside the editor), a .tgz dropped onto the
// window imported through import.upload (a DataTransfer with a real File), a refused drop explained,
// and an error shown in words with its code in a Details disclosure.
// Run: node --import tsx --test tests/e2e/polish.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { tgzBytes } from '../fixtures/skills/tar-bytes';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

const SKILLS = ['brew-tea', 'review-prs', 'write-release-notes'];
const DROPPED = 'dropped-archive-skill';

/** Dispatches dragenter, dragover and (optionally) drop of one in-page File on the document, as a real drag does. */
async function dragFile(page: Page, file: { name: string; base64: string }, drop: boolean): Promise<void> {
  // A string script: this file is type-checked without the DOM library.
  await page.evaluate(`(() => {
    const { name, base64, drop } = ${JSON.stringify({ ...file, drop })};
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], name, { type: 'application/gzip' }));
    const fire = (type) =>
      document.body.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
    fire('dragenter');
    fire('dragover');
    if (drop) fire('drop');
  })()`);
}

describe('desktop polish in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const theme = () => page.evaluate('document.documentElement.dataset.theme');
  const bodyBackground = () => page.evaluate('getComputedStyle(document.body).backgroundColor');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    for (const name of SKILLS) await apiCall(host, 'skills.save', { name, content: skillMd({ name }) });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(host.url);
    await page.getByTestId('skill-row').first().waitFor();
  });
  after(async () => {
    await studio?.close();
  });

  test('the theme follows the OS until a choice is made; the choice survives a reload', async () => {
    assert.equal(await theme(), 'dark');
    assert.equal(await page.getByTestId('theme-toggle').getAttribute('data-theme-choice'), 'system');
    assert.equal(await bodyBackground(), 'rgb(27, 30, 36)');
    await screenshot(page, 'polish-01-dark');

    await page.emulateMedia({ colorScheme: 'light' });
    await until(async () => (await theme()) === 'light', 'the page follows the OS to light');
    assert.equal(await bodyBackground(), 'rgb(255, 255, 255)');

    await page.getByTestId('theme-dark').click();
    assert.equal(await theme(), 'dark');
    await page.reload();
    await page.getByTestId('skill-row').first().waitFor();
    assert.equal(await theme(), 'dark', 'the choice is kept across a reload, over the light OS');
    assert.equal(await page.getByTestId('theme-toggle').getAttribute('data-theme-choice'), 'dark');
  });

  test('Monaco follows the theme (vs-dark, then vs)', async () => {
    await page.goto(`${host.url}#/skill/review-prs/edit`);
    const editor = page.locator('.monaco-editor').first();
    await editor.waitFor();
    await until(async () => (await editor.getAttribute('class'))?.includes('vs-dark') ?? false, 'the editor is dark');
    await page.getByTestId('theme-light').click();
    await until(
      async () => !((await editor.getAttribute('class')) ?? '').includes('vs-dark'),
      'the editor turns light with the page',
    );
  });

  test('Ctrl+K inside the editor opens the palette; typing filters; Enter runs the highlighted command', async () => {
    await page.locator('.monaco-editor textarea').first().focus();
    await page.keyboard.press('Control+k');
    const input = page.getByTestId('palette-input');
    await input.waitFor();
    assert.equal(await page.evaluate("document.activeElement?.getAttribute('data-testid')"), 'palette-input');
    await input.fill('play');
    const options = page.getByTestId('palette-option');
    assert.equal(await options.first().getAttribute('data-command'), 'go:playground');
    await page.keyboard.press('Enter');
    await page.getByTestId('palette').waitFor({ state: 'detached' });
    await until(async () => page.url().endsWith('#/playground'), 'the Playground opens');
  });

  test('the palette opens a skill by name, moves with the arrows and closes on Escape', async () => {
    await page.getByTestId('theme-dark').click();
    await page.keyboard.press('Control+k');
    const input = page.getByTestId('palette-input');
    await input.fill('open re');
    const commands = () =>
      page.getByTestId('palette-option').evaluateAll((els) => els.map((e) => e.getAttribute('data-command')));
    await until(async () => (await commands()).includes('skill:review-prs'), 'the skill rows are listed');
    assert.deepEqual((await commands()).slice(0, 2), ['skill:review-prs', 'skill:write-release-notes']);
    await page.keyboard.press('ArrowDown');
    assert.equal(
      await page.locator('[data-testid="palette-option"][aria-selected="true"]').getAttribute('data-command'),
      'skill:write-release-notes',
    );
    await page.keyboard.press('ArrowUp');
    await screenshot(page, 'polish-02-palette');
    await page.keyboard.press('Enter');
    await until(async () => page.url().endsWith('#/skill/review-prs'), 'the skill opens');

    await page.keyboard.press('Control+k');
    await input.fill('zzzz-nothing');
    await page.getByTestId('palette-empty').waitFor();
    await page.keyboard.press('Escape');
    await page.getByTestId('palette').waitFor({ state: 'detached' });
  });

  test('the palette lists the keyboard shortcuts and switches the theme', async () => {
    await page.getByTestId('nav-palette').click();
    await page.getByTestId('palette-shortcuts').click();
    const list = page.getByTestId('palette-shortcut-list');
    assert.match(await list.innerText(), /Ctrl\+K/);
    assert.match(await list.innerText(), /Ctrl\+S/);
    await page.getByTestId('palette-back').click();
    await page.getByTestId('palette-input').fill('theme light');
    await page.keyboard.press('Enter');
    assert.equal(await theme(), 'light');
    await page.getByTestId('theme-system').click();
    assert.equal(await theme(), 'light', 'the emulated OS is light now');
    await page.emulateMedia({ colorScheme: 'dark' });
    await until(async () => (await theme()) === 'dark', 'system follows the OS again');
  });

  test('a .tgz dropped onto the window is imported (import.upload); a drag shows the drop target', async () => {
    await page.goto(`${host.url}#/library`);
    await page.getByTestId('skill-row').first().waitFor();
    const archive = tgzBytes([
      {
        path: 'package/package.json',
        body: JSON.stringify({ name: 'dropped-pack', version: '1.0.0', license: 'MIT' }),
      },
      {
        path: `package/skills/${DROPPED}/SKILL.md`,
        body: skillMd({
          name: DROPPED,
          description: 'Came in by a drop.',
          body: '# Dropped\n\nUse this when an archive was dropped onto the studio window and must be checked.\n',
        }),
      },
    ]);
    const file = { name: 'dropped-pack-1.0.0.tgz', base64: archive.toString('base64') };
    await dragFile(page, file, false);
    await page.getByTestId('drop-overlay').waitFor();
    await screenshot(page, 'polish-03-drop-target');
    await dragFile(page, file, true);
    await page.getByTestId('drop-overlay').waitFor({ state: 'detached' });
    await page.getByTestId('import-result').waitFor();
    const dialog = page.getByTestId('import-dialog');
    assert.equal(await page.getByTestId('import-imported').innerText(), '1', await dialog.innerText());
    // The dialog lists what it imported, each a link to the skill.
    assert.deepEqual(await page.getByTestId('import-skill').allInnerTexts(), [`${DROPPED}\nv1 · new version`]);
    assert.equal(await page.getByTestId('import-skill').locator('a').getAttribute('href'), `#/skill/${DROPPED}`);
    await screenshot(page, 'polish-04-drop-imported');
    await page.getByTestId('import-close').click();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${DROPPED}"]`).waitFor();
  });

  test('a drop of something else is refused in words', async () => {
    await dragFile(page, { name: 'notes.txt', base64: Buffer.from('hello').toString('base64') }, true);
    const notice = page.getByTestId('drop-notice');
    await notice.waitFor();
    assert.match(await notice.innerText(), /notes\.txt is not a folder or a \.tgz archive/);
    assert.equal(await page.getByTestId('import-dialog').count(), 0, 'nothing was started');
  });

  test('an API error reads as a sentence with a hint; the code is inside Details', async () => {
    await page.getByTestId('nav-import').click();
    await page.getByTestId('import-source').fill('/no/such/folder');
    await page.getByTestId('import-start').click();
    const error = page.getByTestId('import-dialog').getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'import_failed');
    assert.match(await error.innerText(), /Import failed: \/no\/such\/folder does not exist/);
    assert.match(await error.getByTestId('error-hint').innerText(), /folder, a \.tgz archive or an npm package/);
    const details = error.getByTestId('error-details');
    assert.equal(await details.isVisible(), false, 'the code is folded away');
    await error.locator('summary').click();
    assert.match(await details.innerText(), /^import_failed/);
    await page.getByTestId('import-close').click();
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
