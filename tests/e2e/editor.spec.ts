// The skill editor in Chromium against `pskills serve`: the version list in the header, Monaco's diff
// editor between any two versions, and the unsaved-changes guard: a sidebar link, Back, a reload and
// closing the window all ask first, and whatever the answer short of Discard, the text typed is kept
// as a draft that the editor restores.
// Run: node --import tsx --test tests/e2e/editor.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, collectProblems, openStudio, screenshot, until, type Host, type Studio } from './harness';

const SKILL = 'review-prs';
const V1 = skillMd({ name: SKILL });
const V2 = `${V1}\nAdded in version 2.\n`;
const V3 = V2.replace('Read the description of the change', 'Read the title and the description of the change');
const TYPED = 'Typed but not saved yet.';

/** Monaco renders spaces as no-break spaces. */
const plain = (s: string) => s.replace(/\u00a0/g, ' ');

/** The editor's text near the end of the file (where the tests type): Ctrl+End scrolls there. */
async function editorTail(page: Page): Promise<string> {
  const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  return plain(await editor.locator('.view-lines').innerText());
}

async function typeAtEnd(page: Page, text: string): Promise<void> {
  const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
  await editor.waitFor();
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  await page.keyboard.type(text);
  await page.getByTestId('editor-status').getByText('unsaved changes').waitFor();
}

describe('skill editor: versions, diff and the unsaved-changes guard', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const menuItems = () => page.getByTestId('versions-menu').getByTestId('history-item');
  const skillUrl = (rest = '') => `${host.origin}/#/skill/${SKILL}${rest}`;

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    for (const content of [V1, V2, V3]) await apiCall(host, 'skills.save', { name: SKILL, content });
  });

  after(async () => {
    await studio?.close();
  });

  test('the header lists every version and opens the one picked', async () => {
    await page.goto(host.url);
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-version').filter({ hasText: 'v3' }).waitFor();
    assert.equal(await page.getByTestId('versions-button').innerText(), '3 versions ▾');
    await page.getByTestId('versions-button').click();
    await page.getByTestId('versions-menu').waitFor();
    assert.deepEqual(await menuItems().evaluateAll((els) => els.map((e) => e.getAttribute('data-version'))), [
      '3',
      '2',
      '1',
    ]);
    await screenshot(page, 'editor-01-versions');
    await page.getByTestId('versions-menu').locator('[data-testid="history-item"][data-version="1"]').click();
    await page.waitForURL(`**/#/skill/${SKILL}/v/1`);
    await page.getByTestId('skill-version').filter({ hasText: 'v1' }).waitFor();
    assert.equal(await page.getByTestId('versions-menu').count(), 0, 'the menu closes');
    assert.doesNotMatch(await page.getByTestId('markdown').innerText(), /Added in version 2/);
  });

  test("the Diff tab shows two versions in Monaco's diff editor, and any pair can be picked", async () => {
    await page.getByTestId('skill-tab-diff').click();
    await page.waitForURL(`**/#/skill/${SKILL}/diff`);
    const diff = page.getByTestId('version-diff');
    await diff.locator('.monaco-diff-editor').waitFor();
    // Default: the latest against the one before it.
    await until(
      async () => (await diff.getAttribute('data-from')) === '2' && (await diff.getAttribute('data-to')) === '3',
      'v2 → v3 is shown',
    );
    const stats = page.getByTestId('diff-stats');
    await until(async () => (await stats.getAttribute('data-added')) !== null, 'the diff is computed');
    assert.deepEqual([await stats.getAttribute('data-added'), await stats.getAttribute('data-removed')], ['1', '1']);
    assert.equal(await stats.innerText(), '1 change: +1 −1 lines');
    assert.ok((await diff.locator('.char-insert, .line-insert').count()) > 0, 'insertions are highlighted');

    await page.getByTestId('diff-from').selectOption('1');
    await page.waitForURL(`**/#/skill/${SKILL}/diff/1/3`);
    // v2 appended a blank line and a sentence; v3 changed one line.
    await until(
      async () => (await diff.getAttribute('data-from')) === '1' && (await stats.getAttribute('data-added')) === '3',
      'v1 → v3 is computed',
    );
    assert.equal(await stats.getAttribute('data-removed'), '1');
    assert.equal(await stats.innerText(), '2 changes: +3 −1 lines');
    await screenshot(page, 'editor-02-diff');

    await page.getByTestId('diff-swap').click();
    await page.waitForURL(`**/#/skill/${SKILL}/diff/3/1`);
    await until(
      async () => (await diff.getAttribute('data-from')) === '3' && (await stats.getAttribute('data-added')) === '1',
      'v3 → v1 is computed',
    );
    assert.equal(await stats.getAttribute('data-removed'), '3');

    // The header's menu opens the diff of the version shown against the one before it.
    await page.goto(skillUrl('/v/2'));
    await page.getByTestId('skill-version').filter({ hasText: 'v2' }).waitFor();
    await page.getByTestId('versions-button').click();
    await page.getByTestId('versions-diff').click();
    await page.waitForURL(`**/#/skill/${SKILL}/diff/auto/2`);
    await until(
      async () => (await diff.getAttribute('data-from')) === '1' && (await diff.getAttribute('data-to')) === '2',
      'v1 → v2 is shown',
    );
  });

  test('a sidebar link with unsaved text asks first; Stay keeps the editor and the text', async () => {
    await page.getByTestId('skill-tab-read').click();
    await page.waitForURL(`**/#/skill/${SKILL}`);
    await page.getByTestId('edit-open').click();
    await page.waitForURL(`**/#/skill/${SKILL}/edit`);
    await typeAtEnd(page, TYPED);
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-dialog').waitFor();
    assert.ok(page.url().endsWith(`#/skill/${SKILL}/edit`), `still on the editor: ${page.url()}`);
    assert.match(
      await page.getByTestId('leave-dialog').innerText(),
      new RegExp(`${SKILL} has changes that are not saved`),
    );
    await screenshot(page, 'editor-03-leave-dialog');
    await page.getByTestId('leave-stay').click();
    await page.getByTestId('leave-dialog').waitFor({ state: 'detached' });
    assert.ok((await editorTail(page)).includes(TYPED));
    assert.ok(page.url().endsWith(`#/skill/${SKILL}/edit`));
  });

  test('Back and the other skill views are guarded too', async () => {
    await page.goBack();
    await page.getByTestId('leave-dialog').waitFor();
    await until(async () => page.url().endsWith(`#/skill/${SKILL}/edit`), 'the address is put back');
    await page.keyboard.press('Escape'); // Escape = Stay
    await page.getByTestId('leave-dialog').waitFor({ state: 'detached' });
    await page.getByTestId('skill-tab-diff').click();
    await page.getByTestId('leave-dialog').waitFor();
    await page.getByTestId('leave-stay').click();
    await page.getByTestId('edit-close').click();
    await page.getByTestId('leave-dialog').waitFor();
    await page.getByTestId('leave-stay').click();
    assert.ok(page.url().endsWith(`#/skill/${SKILL}/edit`));
    assert.ok((await editorTail(page)).includes(TYPED));
  });

  test('Leave, keep draft: the editor brings the text back when it opens again', async () => {
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-keep').click();
    await page.getByTestId('skill-table').waitFor();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('edit-draft').waitFor();
    await page.getByTestId('edit-open').click();
    await page.getByTestId('draft-restored').waitFor();
    assert.match(
      await page.getByTestId('draft-restored').innerText(),
      /Restored your unsaved changes from .* \(started from v3\)/,
    );
    await page.getByTestId('editor-status').getByText('unsaved changes').waitFor();
    assert.ok((await editorTail(page)).includes(TYPED));
    await screenshot(page, 'editor-04-draft-restored');
  });

  test('a reload asks first, and the draft survives it', async () => {
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.type();
      void d.accept();
    });
    await page.keyboard.type(' More.');
    await page.reload();
    assert.equal(asked, 'beforeunload');
    await page.getByTestId('draft-restored').waitFor();
    assert.ok((await editorTail(page)).includes(`${TYPED} More.`));
  });

  test('closing the window asks first; cancelled, the window stays, and the text is kept either way', async () => {
    const second = await page.context().newPage();
    const secondProblems = collectProblems(second);
    await second.goto(`${host.url}#/skill/${SKILL}/edit`); // a new tab: the token comes with its address
    await typeAtEnd(second, 'From the second window.');
    const answers: string[] = [];
    second.on('dialog', (d) => {
      answers.push(d.type());
      void (answers.length === 1 ? d.dismiss() : d.accept());
    });
    await second.close({ runBeforeUnload: true });
    await until(async () => answers.length === 1, 'the close asks');
    assert.equal(answers[0], 'beforeunload');
    assert.equal(second.isClosed(), false, 'Stay keeps the window open');
    await second.close({ runBeforeUnload: true });
    await until(async () => second.isClosed(), 'the window closes once the user agrees');
    assert.deepEqual(secondProblems, []);
    // The draft is shared by the windows of this studio: the first one restores the newest text.
    page.once('dialog', (d) => void d.accept()); // its own editor still has unsaved text
    await page.reload();
    await page.getByTestId('draft-restored').waitFor();
    assert.ok((await editorTail(page)).includes('From the second window.'));
  });

  test('Discard changes drops the text and its draft', async () => {
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-discard').click();
    await page.getByTestId('skill-table').waitFor();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('edit-open').waitFor();
    assert.equal(await page.getByTestId('edit-draft').count(), 0);
    await page.getByTestId('edit-open').click();
    await page.locator('[data-testid="monaco-host"] .monaco-editor').waitFor();
    assert.equal(await page.getByTestId('draft-restored').count(), 0);
    assert.ok(!(await editorTail(page)).includes('From the second window.'));
    assert.equal(await page.getByTestId('editor-status').getByText('unsaved changes').count(), 0);
  });

  test('Save and leave stores a new version, then goes on', async () => {
    await typeAtEnd(page, 'Saved on the way out.');
    await until(async () => await page.getByTestId('editor-save').isEnabled(), 'the text validates');
    await page.getByTestId('nav-playground').click();
    await page.getByTestId('leave-save').click();
    await page.waitForURL('**/#/playground');
    const saved = await apiCall<{ version: { version: number }; content: string }>(host, 'skills.get', { name: SKILL });
    assert.equal(saved.version.version, 4);
    assert.equal(saved.content, `${V3}\nSaved on the way out.`);
    assert.equal(await page.evaluate(`localStorage.getItem('pskills.draft/${SKILL}')`), null, 'no draft is left');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
