// The studio in Chromium against `pskills serve`: import a real npm package through the Import
// dialog, find a skill, read it, edit it with live diagnostics, save a second version.
// Run: node --import tsx --test tests/e2e/studio.spec.ts   (or: node --import tsx tests/e2e/run.ts)
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

const PACKAGE = process.env.PSKILLS_E2E_PACKAGE ?? '@plaited/development-skills@0.8.1';
const PACKAGE_NAME = PACKAGE.replace(/@[^@/]+$/, '');
const SKILL = process.env.PSKILLS_E2E_SKILL ?? 'validate-skill';
/** Imported and cancelled at once: `npm pack` alone takes longer than the click. */
const CANCELLED_PACKAGE = 'mobile-best-practices@1.10.1';

describe('studio in the browser', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let imported = 0;

  before(async () => {
    studio = await openStudio();
    ({ host, browser, page, problems } = studio);
  });

  after(async () => {
    await studio?.close();
  });

  test('without the token the page loads but the API answers 401', async () => {
    const context = await browser.newContext();
    try {
      const res = await context.newPage().then((p) => p.goto(host.origin + '/'));
      assert.equal(res?.status(), 200); // static files hold no secret (docs/security.md)
      const call = await context.request.post(host.origin + '/api/call/app.info', { data: {} });
      assert.equal(call.status(), 401);
      const wrong = await context.request.post(host.origin + '/api/call/app.info', {
        data: {},
        headers: { authorization: 'Bearer wrong' },
      });
      assert.equal(wrong.status(), 401);
    } finally {
      await context.close();
    }
  });

  test('the token opens an empty library', async () => {
    await page.goto(host.url);
    await page.getByTestId('library-empty').waitFor();
    assert.match(await page.getByTestId('library-count').innerText(), /^0 skills/);
    await screenshot(page, '01-library-empty');
  });

  test('imports a real npm package through the Import dialog', async () => {
    await page.getByTestId('nav-import').click();
    const dialog = page.getByTestId('import-dialog');
    await dialog.waitFor();
    await page.getByTestId('import-source').fill(PACKAGE);
    await screenshot(page, '02-import-dialog');
    await page.getByTestId('import-start').click();
    await page.getByTestId('import-progress').waitFor();
    const result = page.getByTestId('import-result');
    await result.waitFor({ timeout: 240_000 });
    imported = Number(await page.getByTestId('import-imported').innerText());
    assert.ok(imported > 0, `imported ${imported} skills`);
    assert.equal(await page.getByTestId('import-progress').getAttribute('data-status'), 'done');
    await screenshot(page, '03-import-result');
    await page.getByTestId('import-close').click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('skill-row').first().waitFor();
    assert.equal(await page.getByTestId('skill-row').count(), imported);
  });

  test('shows per-file skip reasons for a folder of broken skills', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'pskills-e2e-skills-'));
    try {
      mkdirSync(join(folder, 'no-description'));
      writeFileSync(join(folder, 'no-description/SKILL.md'), '---\nname: no-description\n---\n\n# Nothing here\n');
      mkdirSync(join(folder, 'no-frontmatter'));
      writeFileSync(join(folder, 'no-frontmatter/SKILL.md'), '# A skill without frontmatter\n\nSome text.\n');
      await page.getByTestId('nav-import').click();
      await page.getByTestId('import-source').fill(folder);
      await page.getByTestId('import-start').click();
      await page.getByTestId('import-result').waitFor({ timeout: 60_000 });
      assert.equal(await page.getByTestId('import-imported').innerText(), '0');
      assert.equal(await page.getByTestId('import-skipped').innerText(), '2');
      const reasons = await page.getByTestId('import-skip-list').innerText();
      assert.match(reasons, /no-description/);
      assert.match(reasons, /no-frontmatter/);
      await screenshot(page, '04-import-skips');
      await page.getByTestId('import-close').click();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('a folder without any SKILL.md says so instead of three zeros', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'pskills-e2e-noskills-'));
    try {
      writeFileSync(join(folder, 'README.md'), '# Not a skill\n');
      await page.goto(host.url);
      await page.getByTestId('nav-import').click();
      await page.getByTestId('import-source').fill(folder);
      await page.getByTestId('import-start').click();
      await page.getByTestId('import-result').waitFor({ timeout: 60_000 });
      assert.equal(
        await page.getByTestId('import-none').innerText(),
        `No SKILL.md file was found in ${folder}: a skill is a folder with a SKILL.md file in it.`,
      );
      await page.getByTestId('import-close').click();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test('cancels a running import', async () => {
    await page.getByTestId('nav-import').click();
    await page.getByTestId('import-source').fill(CANCELLED_PACKAGE);
    await page.getByTestId('import-start').click();
    await page.getByTestId('import-progress').waitFor();
    await screenshot(page, '04b-import-running');
    await page.getByTestId('import-cancel').click();
    await page.getByTestId('import-cancelled').waitFor({ timeout: 60_000 });
    assert.equal(await page.getByTestId('import-progress').getAttribute('data-status'), 'cancelled');
    assert.equal(await page.getByTestId('import-result').count(), 0);
    await page.getByTestId('import-close').click();
    assert.equal(await page.getByTestId('skill-row').count(), imported);
  });

  test('searches the library and filters by package', async () => {
    const rows = page.getByTestId('skill-row');
    const total = await rows.count();
    await page.getByTestId('library-search').fill(SKILL.split('-')[0] ?? SKILL);
    await until(async () => (await rows.count()) < total, 'the search narrows the list');
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).waitFor();
    await page.getByTestId('library-package').selectOption(PACKAGE_NAME);
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).waitFor();
    assert.match(await page.getByTestId('library-count').innerText(), /of \d+/);
    await screenshot(page, '05-library-search');
  });

  test('opens a skill: rendered markdown, frontmatter, outline, provenance, history', async () => {
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-name').filter({ hasText: SKILL }).waitFor();
    const md = page.getByTestId('markdown');
    assert.ok((await md.locator('h1, h2').count()) > 0, 'headings rendered');
    assert.equal(await md.locator('script, img[src^="http"]').count(), 0);
    assert.match(await page.getByTestId('frontmatter').innerText(), new RegExp(`name\\s+${SKILL}`));

    const outline = page.getByTestId('outline-item');
    assert.ok((await outline.count()) > 1, 'outline has sections');
    const last = outline.last();
    const line = await last.getAttribute('data-line');
    const heading = md.locator(`[data-line="${line}"]`);
    const before = await heading.boundingBox();
    assert.ok(before && before.y > 840, 'the last section starts below the fold');
    await last.click();
    await until(async () => {
      const box = await heading.boundingBox();
      return !!box && box.y >= 0 && box.y + box.height <= 840;
    }, 'the section heading is scrolled into view');

    const provenance = await page.getByTestId('provenance').innerText();
    assert.match(provenance, /npm registry/);
    assert.ok(provenance.includes(PACKAGE), `provenance names ${PACKAGE}: ${provenance}`);
    assert.match(provenance, /Licence\s+\S+/);
    assert.match(provenance, new RegExp(`${SKILL}/SKILL\\.md`));
    assert.equal(await page.getByTestId('history-item').count(), 1);
    await page.getByTestId('frontmatter').scrollIntoViewIfNeeded();
    await screenshot(page, '06-skill-page');
  });

  test('edits with live diagnostics and saves version 2', async () => {
    await page.getByTestId('edit-open').click();
    const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
    await editor.waitFor();
    await page.getByTestId('diagnostics').waitFor();
    const status = page.getByTestId('editor-status');
    const settled = async () => !(await status.innerText()).includes('Checking');
    await until(settled, 'the first validation answers');
    const errorsBefore = await page.locator('[data-testid="diagnostic"][data-severity="error"]').count();
    assert.equal(errorsBefore, 0, 'the imported skill has no errors');
    await screenshot(page, '07-editor');

    // A duplicate `name:` key right under the opening `---` breaks the YAML on the original name line.
    const { content } = await apiCall<{ content: string }>(host, 'skills.get', { name: SKILL });
    const nameLine = content.split('\n').findIndex((l) => /^name:/.test(l)) + 1;
    assert.ok(nameLine > 1, 'frontmatter has a name field');

    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('name: duplicate');
    const error = page.locator('[data-testid="diagnostic"][data-severity="error"]');
    await error.first().waitFor();
    assert.equal(await error.first().getAttribute('data-line'), String(nameLine + 1));
    await editor.locator('.squiggly-error').first().waitFor();
    assert.ok(await page.getByTestId('editor-save').isDisabled(), 'Save is disabled while there are errors');
    await screenshot(page, '08-editor-error');

    // Remove the inserted line again: the marker goes away.
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+End');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await error.first().waitFor({ state: 'detached' });
    await editor.locator('.squiggly-error').first().waitFor({ state: 'detached' });

    // A real change to the body, then save.
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    // The remote image must never load (CSP would also log it): it renders as a placeholder.
    await page.keyboard.type('Edited in the studio end-to-end test. ![remote logo](https://example.com/logo.png)');
    await until(
      async () => (await settled()) && (await page.getByTestId('editor-save').isEnabled()),
      'Save is enabled again',
    );
    await page.getByTestId('editor-save').click();
    const saved = page.getByTestId('save-status');
    await saved.waitFor();
    assert.equal(await saved.innerText(), 'Saved as version 2');
    await page.locator('[data-testid="history-item"][data-version="2"]').waitFor();
    assert.equal(await page.getByTestId('history-item').count(), 2);
    assert.equal(await page.getByTestId('skill-version').innerText(), 'v2');
    await screenshot(page, '09-saved-v2');

    // Saving the same text again creates nothing.
    await page.getByTestId('editor-save').click();
    await page.getByTestId('save-status').filter({ hasText: 'No changes: identical content' }).waitFor();
  });

  test('shows an older version with its own provenance', async () => {
    await page.getByTestId('edit-close').click();
    await page.getByTestId('skill-reading').waitFor();
    assert.match(await page.getByTestId('provenance').innerText(), /edited in the studio/);
    const md = page.getByTestId('markdown');
    await md.getByText('Edited in the studio end-to-end test.').waitFor();
    assert.equal(await md.locator('img').count(), 0);
    const blocked = md.locator('.md-image-blocked');
    assert.equal(
      await blocked.getAttribute('title'),
      'Image not loaded (no remote content): https://example.com/logo.png',
    );
    await blocked.scrollIntoViewIfNeeded();
    await screenshot(page, '10-v2-rendered');
    await page.locator('[data-testid="history-item"][data-version="1"]').click();
    await page.getByTestId('skill-version').filter({ hasText: 'v1' }).waitFor();
    assert.match(await page.getByTestId('provenance').innerText(), /npm registry/);
    assert.doesNotMatch(await page.getByTestId('markdown').innerText(), /Edited in the studio end-to-end test/);
    await screenshot(page, '11-version-1');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });

  // Last: Chromium itself logs the expected HTTP 404 of this call as a console error.
  test('shows API errors inline with their code', async () => {
    await page.goto(`${host.origin}/#/skill/no-such-skill`);
    const error = page.getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'not_found');
    assert.match(await error.innerText(), /no-such-skill/);
    await screenshot(page, '12-error-not-found');
  });
});
