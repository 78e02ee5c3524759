// The Skill page's Evolve tab in Chromium against `pskills serve`, on the tiny hypernetwork fixture
// bundle (random weights: every candidate earns what its tests allow whatever it says): a run with
// progress, the score chart and the candidates with their diffs; accepting one as the next version
// and rejecting another; a cancelled run kept and resumed.
// Run: node --import tsx --test tests/e2e/evolve.spec.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');
const SKILL = 'sql-locks';
/** A skill with no verifier tests: Evolve has nothing to score with. */
const UNTESTED = 'tea-notes';
const BODY = `# SQL locks

Review schema migrations before they run on production.

## When to use

Use this before a schema migration runs on production.

## Background

Archive folders keep older material by quarter.

## Steps

1. Read the migration.
2. Read the migration.

## Locking

- Check whether the migration takes a table lock.
- Name the lock.
`;
const TESTS = [
  {
    id: 'never',
    prompt: 'Does this migration take a lock?',
    expect: { kind: 'exact', value: 'no random model says 4711' },
  },
  {
    id: 'always',
    prompt: 'Is a lock needed?',
    expect: { kind: 'not', of: { kind: 'contains', value: 'zq-never-zq' } },
  },
];

describe('evolve in the browser', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const view = () => page.getByTestId('evolve-view');
  const statusIs = (s: string) => async () => (await view().getAttribute('data-status')) === s;

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', {
      name: SKILL,
      content: skillMd({ name: SKILL, description: 'Review SQL migrations for locking.', body: BODY }),
    });
    await apiCall(host, 'verify.setTests', { name: SKILL, tests: TESTS });
    await apiCall(host, 'skills.save', { name: UNTESTED, content: skillMd({ name: UNTESTED }) });
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('a run shows progress, then the score chart and each candidate with its diff', async () => {
    await page.goto(host.url, { timeout: 120_000 });
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-tab-evolve').click();
    await page.waitForURL(`**/#/skill/${SKILL}/evolve`);
    await view().waitFor();
    await page.getByTestId('evolve-iterations').fill('2');
    await page.getByTestId('evolve-candidates').fill('2');
    await page.getByTestId('evolve-start').click();
    await until(statusIs('done'), 'the run finished', 300_000);

    const rows = page.getByTestId('evolve-candidate');
    assert.ok((await rows.count()) >= 3, 'two iterations of up to two candidates');
    const scores = await rows.evaluateAll((els) => els.map((e) => e.children[3]!.textContent!.trim()));
    assert.ok(
      scores.every((s) => s === '0.500'),
      `scores ${scores.join(', ')}`,
    );
    assert.match(await page.getByTestId('evolve-summary').innerText(), /baseline 0\.500 · best 0\.500/);
    await until(
      async () => (await page.getByTestId('evolve-chart').getAttribute('data-ready')) === 'true',
      'the chart drew',
    );
    assert.ok((await page.locator('[data-testid="evolve-chart"] svg path').count()) > 0, 'the chart has marks');
    await until(
      async () => Number((await page.getByTestId('evolve-diff').getAttribute('data-added')) ?? '0') > 0,
      'the diff editor counted the added lines',
    );
    await screenshot(page, 'evolve-01-run');
  });

  test('accept makes a candidate the next version; reject marks another', async () => {
    const rows = page.getByTestId('evolve-candidate');
    const first = await rows.nth(0).getAttribute('data-id');
    await rows.nth(0).click();
    await until(async () => (await page.getByTestId('evolve-chosen').getAttribute('data-id')) === first, 'chosen');
    // The heading names the highlighted row as the table does (It. and #), and sits below the table.
    const [it, index] = await rows.nth(0).evaluate((e) => [e.children[0]!.textContent!, e.children[1]!.textContent!]);
    const title = page.getByTestId('evolve-chosen-title');
    assert.equal(await title.innerText(), `Iteration ${it}, candidate #${index}`);
    const table = (await page.getByTestId('evolve-candidates-table').boundingBox())!;
    assert.ok((await title.boundingBox())!.y >= table.y + table.height, 'the heading does not sit on a row');
    await page.getByTestId('evolve-accept').click();
    await page.getByTestId('evolve-notice').waitFor();
    assert.match(
      await page.getByTestId('evolve-notice').innerText(),
      new RegExp(`^Iteration ${it}, candidate #${index} is now version 2, compiled \\(adapter [0-9a-f]{12}\\)`),
    );
    await until(async () => (await page.getByTestId('skill-version').innerText()) === 'v2', 'the header shows v2');
    // The candidate rows reload after the skill header; wait for them rather than read once.
    await until(async () => /accepted\s*\(v2\)/.test(await rows.nth(0).innerText()), 'the row says accepted (v2)');
    assert.match(
      await page.getByTestId('skill-provenance-summary').innerText(),
      /^evolve · run [0-9a-f]{12} · from v1/,
    );
    await screenshot(page, 'evolve-02-accepted');

    await rows.nth(1).click();
    await page.getByTestId('evolve-reject').click();
    await until(async () => /rejected/.test(await rows.nth(1).innerText()), 'the second is rejected');
    assert.ok(await page.getByTestId('evolve-reject').isDisabled());
  });

  test('cancel keeps what was scored; Resume finishes the run', async () => {
    await page.getByTestId('evolve-iterations').fill('6');
    await page.getByTestId('evolve-start').click();
    await until(
      async () => /[1-9]\d* scored/.test(await page.getByTestId('evolve-progress').innerText()),
      'a candidate was scored',
      120_000,
    );
    await page.getByTestId('evolve-cancel').click();
    await until(statusIs('cancelled'), 'the run was cancelled', 120_000);
    assert.match(
      await page.getByTestId('evolve-progress').innerText(),
      /Cancelled: the candidates scored so far are kept/,
    );
    const run = await page.getByTestId('evolve-run-select').inputValue();
    assert.match(
      await page.locator(`[data-testid="evolve-run-select"] option[value="${run}"]`).innerText(),
      /· cancelled$/,
    );
    await screenshot(page, 'evolve-03-cancelled');
    await page.getByTestId('evolve-resume').click();
    await until(statusIs('done'), 'the resumed run finished', 400_000);
    assert.match(
      await page.locator(`[data-testid="evolve-run-select"] option[value="${run}"]`).innerText(),
      /· 6\/6 · done$/,
    );
    assert.deepEqual(problems, []);
  });

  test('a version without tests says so before Run, and its link opens the Tests tab', async () => {
    await page.goto(`${host.url}#/skill/${UNTESTED}/evolve`);
    await page.getByTestId('evolve-no-tests').waitFor();
    assert.match(
      await page.getByTestId('evolve-no-tests').innerText(),
      new RegExp(`^${UNTESTED}@1 has no tests yet, and Evolve scores every candidate with them`),
    );
    assert.ok(await page.getByTestId('evolve-start').isDisabled(), 'Run waits for tests');
    await page.getByTestId('evolve-add-tests').click();
    await page.waitForURL(`**/#/skill/${UNTESTED}/tests`);
    await page.getByTestId('tests-view').waitFor();
    assert.deepEqual(problems, []);
  });
});
