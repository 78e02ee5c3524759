// The Continual page in Chromium against `pskills serve`, on the tiny hypernetwork fixture bundle: opened
// from the command palette, a bad form refused with the field named, a 2-episode merge run with
// progress, the pass rate per episode drawn and listed, the two global-adapter versions it wrote; the
// run in its own workspace (listed with its curve and lessons, the Library and its global timeline
// untouched); a lesson adopted, a taken name asking for another; a cancelled run resumed.
// Run: node --import tsx --test tests/e2e/continual.spec.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');

describe('the Continual page in the browser', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const status = async () => page.getByTestId('continual-page').getAttribute('data-status');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('the palette opens the page; a bad form is refused with the field named', async () => {
    await page.goto(host.url, { timeout: 120_000 });
    await page.getByTestId('nav-library').waitFor();
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('continual');
    assert.equal(await page.getByTestId('palette-option').first().getAttribute('data-command'), 'go:continual');
    await page.keyboard.press('Enter');
    await until(async () => page.url().endsWith('#/continual'), 'the Continual page opens');
    await page.getByTestId('continual-page').waitFor();
    assert.equal(
      await page
        .getByTestId('nav-continual')
        .getAttribute('class')
        .then((c) => /active/.test(c ?? '')),
      true,
    );

    await page.getByTestId('continual-episodes').fill('0');
    await page.getByTestId('continual-start').click();
    assert.match(await page.getByTestId('continual-problems').innerText(), /^Episodes must be at least 1\./);
    assert.equal(await status(), 'idle');
  });

  test('a 2-episode merge run: progress, the pass rate per episode, the global versions it wrote', async () => {
    await page.getByTestId('continual-episodes').fill('2');
    await page.getByTestId('continual-seed').fill('0');
    await page.getByTestId('continual-mode').selectOption('merge');
    await page.getByTestId('continual-tier').selectOption('instant'); // the fixture has no train-step graph
    await page.locator('details.more summary').click();
    await page.getByTestId('continual-demos').fill('2');
    await page.getByTestId('continual-tasks').fill('2');
    await page.getByTestId('continual-tokens').fill('8');
    await page.getByTestId('continual-start').click();
    await page.getByTestId('continual-problems').waitFor({ state: 'detached' });
    await until(async () => (await status()) === 'done', 'the run finished', 400_000);

    const episodes = page.getByTestId('continual-episode');
    assert.equal(await episodes.count(), 2);
    for (const text of await page.getByTestId('continual-pass-rate').allInnerTexts())
      assert.match(text, /^\d+\.\d%\s\(\d\/\d\)$/);
    assert.match(await episodes.nth(0).innerText(), /lesson-[\w-]+@\d+/);
    assert.deepEqual(
      await page.getByTestId('continual-global').evaluateAll((els) => els.map((e) => e.getAttribute('data-version'))),
      ['1', '2'],
    );
    assert.match(await page.getByTestId('continual-summary').innerText(), /after 2 episodes · merge · seed 0/);
    await until(
      async () => (await page.getByTestId('continual-chart').getAttribute('data-ready')) === 'true',
      'the chart drew',
    );
    assert.ok((await page.locator('[data-testid="continual-chart"] svg path').count()) > 0, 'the chart has marks');
    await screenshot(page, 'continual-01-run');

    // The link opens this run's own timeline, in its workspace: both versions, never "No global versions yet".
    await page.getByTestId('continual-timeline-link').click();
    await page.waitForURL(/#\/adapters\/global\/run\/[0-9a-f]{12}$/);
    await page.getByTestId('run-timeline-version').first().waitFor();
    assert.deepEqual(
      await page
        .getByTestId('run-timeline-version')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-version'))),
      ['1', '2'],
    );
    assert.equal(await page.getByTestId('global-empty').count(), 0);
    assert.match(await page.getByTestId('run-timeline').innerText(), /in the run's own workspace/);
    await page.getByTestId('nav-continual').click();
    await page.getByTestId('continual-episode').first().waitFor();
  });

  test('the run lives in its workspace: listed with its lessons; the Library stays empty until Adopt', async () => {
    const row = page.getByTestId('continual-run').first();
    await row.waitFor();
    assert.equal(await row.getAttribute('data-status'), 'done');
    const run = (await row.getAttribute('data-run'))!;
    await row.locator('button.link').click();
    await page.getByTestId('continual-detail').waitFor();
    assert.equal(await page.getByTestId('continual-lesson').count(), 2);
    // Nothing of the run is in the Library or its global timeline.
    assert.deepEqual(await apiCall(host, 'skills.list', {}), []);
    assert.deepEqual((await apiCall<{ versions: unknown[] }>(host, 'ema.history', {})).versions, []);

    await page.getByTestId('continual-adopt-lesson').first().click();
    await page.getByTestId('continual-adopted').waitFor();
    assert.match(
      await page.getByTestId('continual-adopted').innerText(),
      new RegExp(`lesson-[\\w-]+ v1 .* of run ${run}`),
    );
    assert.equal((await apiCall<unknown[]>(host, 'skills.list', {})).length, 1);

    // The same lesson again: its name is taken; the page asks for another and overwrites nothing.
    await page.getByTestId('continual-adopt-lesson').first().click();
    await page.getByTestId('continual-adopt-error').waitFor();
    assert.match(
      await page.getByTestId('continual-adopt-error').innerText(),
      /is already in the Library; choose another name/,
    );
    await page.getByTestId('continual-adopt-name').fill('my-first-lesson');
    await page.getByTestId('continual-adopt-rename').click();
    await until(
      async () => /my-first-lesson v1/.test(await page.getByTestId('continual-adopted').innerText()),
      'adopted under the new name',
    );
    assert.equal((await apiCall<unknown[]>(host, 'skills.list', {})).length, 2);
    await page.getByTestId('continual-adopt-global').click();
    await until(
      async () => new RegExp(`global-${run} v1`).test(await page.getByTestId('continual-adopted').innerText()),
      'the global adapter adopted',
    );
    // The refused adopt is the 409 the page turned into its question; nothing else went wrong.
    const refused = problems.filter((p) => /409 \(Conflict\).*continual\.adopt/.test(p));
    assert.equal(refused.length, 1);
    problems.splice(problems.indexOf(refused[0]!), 1);
    await screenshot(page, 'continual-02-workspace');
  });

  test('Cancel keeps the run; Resume finishes it under the same id', async () => {
    await page.getByTestId('continual-mode').selectOption('cat');
    await page.getByTestId('continual-tier').selectOption('instant');
    await page.getByTestId('continual-episodes').fill('6');
    await page.getByTestId('continual-seed').fill('1');
    // Cancel from inside the page the moment the first episode's row is drawn: later episodes take
    // far longer than the cancel message, so the run stops part-way whatever the machine's speed.
    // a string, as the other specs pass page code: the Node-side tsconfig has no DOM types
    await page.evaluate(`(() => {
      const observer = new MutationObserver(() => {
        const running = document.querySelector('[data-testid="continual-page"]')?.getAttribute('data-status');
        if (running !== 'running' || !document.querySelector('[data-testid="continual-episode"]')) return;
        observer.disconnect();
        document.querySelector('[data-testid="continual-cancel"]')?.click();
      });
      observer.observe(document.body, { childList: true, subtree: true, attributes: true });
    })()`);
    await page.getByTestId('continual-start').click();
    await until(async () => (await status()) === 'cancelled', 'the run was cancelled', 120_000);
    const measured = await page.getByTestId('continual-episode').count();
    assert.ok(measured >= 1 && measured < 6, `${measured} episodes measured before the cancel`);
    const cancelled = await page.getByTestId('continual-cancelled').innerText();
    const run = /Resume goes on with run ([0-9a-f]{12})/.exec(cancelled)?.[1];
    assert.ok(run, cancelled);
    await page.getByTestId('continual-resume').click();
    await until(async () => (await status()) === 'done', 'the resumed run finished', 400_000);
    assert.match(await page.getByTestId('continual-summary').innerText(), new RegExp(`· cat · seed 1 · run ${run}`));
    assert.equal(await page.getByTestId('continual-episode').count(), 6);
    // Two runs listed, merge and cat: the mode-against-mode chart draws both.
    await until(
      async () => (await page.getByTestId('continual-modes-chart').getAttribute('data-ready')) === 'true',
      'the mode-against-mode chart drew',
    );
    assert.equal(await page.getByTestId('continual-run').count(), 2);
    assert.deepEqual(problems, []);
  });
});
