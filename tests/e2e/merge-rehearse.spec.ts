// Merge with Rehearse in the merge workbench, in Chromium against `pskills serve` on the real default
// bundle (a rehearsal step there takes a fraction of a second, as a user sees it): two skills distilled
// through the API, picked in the workbench with Rehearse 400. From the click on Save the workbench shows
// what it is doing (merging, the teacher pass, then step k of 400 with the loss and the time left) and a
// Cancel, which stops the rehearsal between steps: it says nothing was stored, and nothing was. A short
// rehearsal then runs to its end and is saved with its recipe.
// Run: node --import tsx --test --test-concurrency=1 tests/e2e/merge-rehearse.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterSummary, DistillResultSchema } from '../../common/api/adapter-schemas';
import { apiCall, apiStream, openStudio, screenshot, until, type Host, type Studio } from './harness';

const skill = (name: string, word: string) => `---
name: ${name}
description: Answer a greeting with the word ${word}.
---
# ${name}

Prefix the answer with \`${word}:\` and keep it on one line.

## Examples
- User: hi
- User: good morning
`;

describe('merge with rehearsal: progress and Cancel', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  const ids: string[] = [];
  const candidate = (id: string) => page.locator(`[data-testid="merge-candidate"][data-adapter-id="${id}"]`);
  const stored = async () => (await apiCall<AdapterSummary[]>(host, 'adapters.list')).length;

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    for (const [name, word] of [
      ['greet-vessor', 'VESSOR'],
      ['greet-dirla', 'DIRLA'],
    ] as const) {
      await apiCall(host, 'skills.save', { name, content: skill(name, word) });
      const r = await apiStream<DistillResultSchema>(host, 'adapters.distill', { skill: { name }, steps: 2 });
      ids.push(r.adapter.id);
    }
    await page.goto(host.url);
    await page.getByTestId('nav-adapters').click();
    await page.getByTestId('merge-open').click();
    for (const id of ids) await candidate(id).locator('input').check();
  });

  after(async () => {
    await studio?.close();
  });

  test('Save with Rehearse 400 shows each step with its loss and a Cancel; Cancel stores nothing', async () => {
    const before = await stored();
    await page.getByTestId('merge-rehearse').fill('400');
    await page.getByTestId('merge-save').click();
    // From the first moment: the progress line and Cancel.
    await page.getByTestId('merge-progress').waitFor({ timeout: 1000 });
    await page.getByTestId('merge-cancel').waitFor({ timeout: 1000 });
    assert.equal(await page.getByTestId('merge-rehearse').isDisabled(), true, 'the recipe is locked while it saves');
    await until(
      async () =>
        /^step \d+ of 400$/.test(
          await page
            .getByTestId('merge-step')
            .innerText()
            .catch(() => ''),
        ),
      'a rehearsal step shows',
      120_000,
    );
    assert.match(await page.getByTestId('merge-loss').innerText(), /^loss \d+\.\d{4}$/);
    assert.match(await page.getByTestId('merge-progress').innerText(), /Rehearsing[\s\S]*about [\d.]+ s left/);
    await screenshot(page, 'adapters-merge-03-rehearsing');
    const step = Number(/step (\d+)/.exec(await page.getByTestId('merge-step').innerText())![1]);
    assert.ok(step < 400, `cancelled at step ${step}`);
    await page.getByTestId('merge-cancel').click();
    await page.getByTestId('merge-cancelled').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId('merge-cancelled').innerText(), 'Cancelled: nothing was stored.');
    assert.equal(await page.getByTestId('merge-progress').count(), 0);
    assert.equal(await page.getByTestId('merge-saved').count(), 0);
    assert.equal(await page.getByTestId('error').count(), 0, 'a cancel is not an error');
    assert.equal(await stored(), before, 'nothing was stored');
    assert.equal(await page.getByTestId('merge-save').isEnabled(), true);
  });

  test('a short rehearsal runs to its end and is saved with its recipe', async () => {
    await page.getByTestId('merge-rehearse').fill('3');
    await page.getByTestId('merge-save').click();
    await page.getByTestId('merge-saved').waitFor({ timeout: 120_000 });
    assert.equal(await page.getByTestId('merge-progress').count(), 0);
    assert.equal(await page.getByTestId('merge-cancelled').count(), 0);
    const merged = (await apiCall<AdapterSummary[]>(host, 'adapters.list')).find((a) => a.recipe.kind === 'merge');
    assert.deepEqual(merged?.recipe.kind === 'merge' && merged.recipe.rehearse, { steps: 3, seed: 0 });
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
