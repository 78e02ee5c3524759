// Library → New skill in Chromium against `pskills serve`: from the empty Library a name is refused
// under the field by the API's own rule, a good one writes version 1 from the SKILL.md template and
// opens its editor; replacing the placeholder description and saving makes version 2; a name that
// exists is refused under the field and nothing is written.
// Run: node --import tsx --test tests/e2e/new-skill.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { SkillDetail } from '../../common/api/skill-schemas';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

const SKILL = 'review-prs';
const DESCRIPTION = 'Review pull requests for correctness, tests and clear commit messages.';

/** Monaco renders spaces as no-break spaces. */
const plain = (s: string) => s.replace(/\u00a0/g, ' ');

describe('New skill: write a skill from scratch', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const dialog = () => page.getByTestId('new-skill-dialog');
  const nameError = () => page.getByTestId('new-skill-name-error');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
  });

  after(async () => {
    await studio?.close();
  });

  test('the empty Library offers New skill; a bad name is refused under the field', async () => {
    await page.goto(host.url);
    await page.getByTestId('library-empty').waitFor();
    await page.getByTestId('library-empty-new-skill').click();
    await dialog().waitFor();
    // Create with nothing typed: the field says what it needs, nothing is sent.
    await page.getByTestId('new-skill-create').click();
    assert.equal(await nameError().innerText(), 'Name is required: type the name of the new skill.');
    await page.getByTestId('new-skill-name').fill(` ${SKILL}`);
    assert.equal(await nameError().innerText(), 'Name starts or ends with a space: remove it.');
    assert.equal(await page.getByTestId('new-skill-name').getAttribute('aria-invalid'), 'true');
    assert.ok(await page.getByTestId('new-skill-create').isDisabled(), 'Create waits for a good name');
    await page.getByTestId('new-skill-name').fill(SKILL);
    await nameError().waitFor({ state: 'detached' });
    await screenshot(page, 'new-skill-01-dialog');
    assert.equal((await apiCall<{ skills: number }>(host, 'app.info')).skills, 0);
  });

  test('Create writes version 1 from the template and opens its editor', async () => {
    await page.getByTestId('new-skill-name').press('Enter');
    await dialog().waitFor({ state: 'detached' });
    await until(async () => page.url().endsWith(`#/skill/${SKILL}/edit`), 'the editor of the new skill is open');
    const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
    await editor.waitFor();
    const text = plain(await editor.locator('.view-lines').innerText());
    assert.match(text, new RegExp(`name: ${SKILL}`));
    assert.match(text, /description: Replace this with what the skill does/);
    assert.match(text, /## When to use/);
    // The validator points at the placeholder description until it is replaced.
    const warning = page.locator('[data-testid="diagnostic"][data-severity="warning"][data-line="3"]');
    await warning.waitFor();
    assert.match(await warning.innerText(), /still the New skill template's placeholder/);
    await screenshot(page, 'new-skill-02-editor');

    const v1 = await apiCall<SkillDetail>(host, 'skills.get', { name: SKILL });
    assert.deepEqual(v1.version.provenance, { kind: 'template' });
    assert.equal(v1.version.version, 1);
    assert.match(v1.content, /^## Steps$/m);
    assert.match(v1.content, /^## Examples$/m);
    assert.match(v1.content, /^## Pitfalls$/m);
  });

  test('replacing the description and saving makes version 2', async () => {
    const editor = page.locator('[data-testid="monaco-host"] .monaco-editor');
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+End');
    await page.keyboard.type(`description: ${DESCRIPTION}`);
    await page.getByTestId('editor-status').getByText('unsaved changes').waitFor();
    await page.locator('[data-testid="diagnostic"][data-line="3"]').waitFor({ state: 'detached' });
    await until(async () => await page.getByTestId('editor-save').isEnabled(), 'Save is enabled');
    await page.getByTestId('editor-save').click();
    await page.getByTestId('save-status').filter({ hasText: 'Saved as version 2' }).waitFor();

    const v2 = await apiCall<SkillDetail>(host, 'skills.get', { name: SKILL });
    assert.equal(v2.version.version, 2);
    assert.equal(v2.version.parentVersion, 1);
    assert.equal(v2.description, DESCRIPTION);
    assert.deepEqual(
      v2.history.map((v) => v.provenance.kind),
      ['manual', 'template'],
    );
    await page.getByTestId('edit-close').click();
    await page.getByTestId('skill-reading').waitFor();
    await page.locator('[data-testid="history-item"][data-version="1"]').click();
    await page.getByTestId('skill-version').filter({ hasText: 'v1' }).waitFor();
    assert.match(await page.getByTestId('provenance').innerText(), /written in the studio/);
  });

  test('a name that exists is refused under the field, and nothing is written', async () => {
    await page.getByTestId('nav-library').click();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).waitFor();
    await page.getByTestId('library-new-skill').click();
    await dialog().waitFor();
    await page.getByTestId('new-skill-name').fill(SKILL);
    const seen = problems.length;
    await page.getByTestId('new-skill-create').click();
    await nameError().waitFor();
    // The studio's refusal is a 409, which Chromium logs as a failed resource: that one is expected.
    const refusals = problems.splice(seen);
    assert.equal(refusals.length, 1, refusals.join('\n'));
    assert.match(refusals[0]!, /status of 409 \(Conflict\).*\/api\/call\/skills\.create/);
    assert.equal(
      await nameError().innerText(),
      `Name: a skill named “${SKILL}” already exists. Choose another name, or open that one from the Library.`,
    );
    assert.ok(await page.getByTestId('new-skill-create').isDisabled(), 'Create waits for another name');
    await screenshot(page, 'new-skill-03-taken');
    const after = await apiCall<SkillDetail>(host, 'skills.get', { name: SKILL });
    assert.equal(after.history.length, 2);
    assert.equal(after.description, DESCRIPTION);
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('skill-row').count(), 1);
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
