// Terms of art explained where they appear, and numbers shown as they were entered: a "?" after β,
// rank budget, rank / α, scale carries one line of help (renderer/src/lib/shared/glossary.ts) while the labels read
// "blend weight of the new lesson" and "size of the merged adapter"; the first
// global version shows the β it records (1: the adapter itself), not the 0.1 of later updates; the
// Library's package filter shows no "(0)" when no skill came from a package.
// Run: node --import tsx --test tests/e2e/plain-words.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AdapterWritten } from '../../common/api/adapter-schemas';
import { skillMd } from '../fixtures/skills/skill-md';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, openStudio, ROOT, until, type Studio } from './harness';

describe('plain words', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let work: string;
  let id: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-words-'));
    studio = await openStudio();
    await apiCall(studio.host, 'skills.save', { name: 'tidy-notes', content: skillMd({ name: 'tidy-notes' }) });
    await apiCall(studio.host, 'engine.loadBundle', { dir: join(ROOT, 'tests/fixtures/bundle-tiny') });
    await writeFixturePeft(join(work, 'peft'), 3);
    id = (await apiCall<AdapterWritten>(studio.host, 'adapters.import', { dir: join(work, 'peft') })).adapter.id;
  });
  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const help = (term: string) => studio!.page.getByTestId(`help-${term}`).first();

  test('the Library has no package filter, and no "(0)", when no skill came from a package', async () => {
    const { page, host } = studio!;
    await page.goto(host.url);
    await page.getByTestId('library-count').waitFor();
    assert.equal(await page.getByTestId('library-package').count(), 0);
    assert.doesNotMatch(await page.locator('main').innerText(), /\(0\)/);
  });

  test('an adapter’s rank / α and scale carry their help', async () => {
    const { page, host } = studio!;
    await page.goto(`${host.url}#/adapters/${id}`);
    await page.getByTestId('adapter-facts').waitFor();
    assert.equal(await page.getByTestId('facts-rank').innerText(), '4 / 8');
    assert.equal(await page.getByTestId('facts-scale').innerText(), '2');
    assert.match((await help('rankAlpha').getAttribute('title'))!, /how many independent directions.*α \/ rank/s);
    assert.match((await help('scale').getAttribute('title'))!, /how strongly the adapter’s change/);
    assert.equal(await help('scale').getAttribute('role'), 'img');
  });

  test('the first global version records β 1 and the form says so; later ones show β as typed', async () => {
    const { page } = studio!;
    await page.getByTestId('adapters-tab-global').click();
    await page.getByTestId('global-empty').waitFor();
    const beta = page.getByTestId('global-update-beta');
    assert.equal(await beta.inputValue(), '1');
    assert.ok(await beta.isDisabled());
    assert.match((await help('beta').getAttribute('title'))!, /blend weight of the new lesson/);
    assert.match((await help('rankBudget').getAttribute('title'))!, /size of the merged adapter/);
    // The labels in a skill author's words; β and "rank budget" stay in the help.
    const form = page.getByTestId('global-update-form');
    assert.equal(
      await form.getByLabel('Blend weight of the new lesson', { exact: true }).getAttribute('data-testid'),
      'global-update-beta',
    );
    assert.equal(
      await form.getByLabel('Size of the merged adapter', { exact: true }).getAttribute('data-testid'),
      'global-update-rank',
    );
    assert.doesNotMatch(await form.innerText(), /β|rank budget/i);
    await page.getByTestId('global-update-adapter').selectOption(id);
    await page.getByTestId('global-update').click();
    const row = (n: number) => page.locator(`[data-testid="global-version"][data-version="${n}"]`);
    await row(1).waitFor();
    assert.equal(await row(1).getByTestId('global-beta').innerText(), '1 · first');

    assert.equal(await beta.inputValue(), '0.1');
    await beta.fill('0.1');
    await page.getByTestId('global-update-adapter').selectOption(id);
    await page.getByTestId('global-update').click();
    await row(2).waitFor();
    assert.equal(await row(2).getByTestId('global-beta').innerText(), '0.1');
  });

  test('the Continual page explains β and rank budget', async () => {
    const { page, host } = studio!;
    await page.goto(`${host.url}#/continual`);
    await page.locator('details.more summary').click();
    await until(
      async () => (await help('beta').isVisible()) && (await help('rankBudget').isVisible()),
      'the help shows',
    );
    assert.match((await help('beta').getAttribute('aria-label'))!, /\(1 − β\) × itself \+ β × the new adapter/);
    assert.equal(
      await page.getByLabel('Blend weight of each lesson', { exact: true }).getAttribute('data-testid'),
      'continual-beta',
    );
    assert.equal(
      await page.getByLabel('Size of the merged adapter', { exact: true }).getAttribute('data-testid'),
      'continual-rank',
    );
    assert.deepEqual(studio!.problems, []);
  });
});
