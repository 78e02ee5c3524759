// The Library and Adapters pages with 1,000 skills and 1,000 adapters: the library is
// written into the data folder before `pskills serve` opens it (scale-library.ts). Each page lists
// every row (data-total), draws only the rows in view, and scrolling or sorting brings any row into
// the DOM. The render time of each page (render-timing.ts) is recorded as a test diagnostic, not
// asserted: it depends on the machine; bench/render.ts reports it.
// Run: node --import tsx --test tests/e2e/library-scale.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { openStudio, screenshot, until, type Studio } from './harness';
import { median, timeNavigation, type RenderSample, type RenderTarget } from './render-timing';
import { fillScaleLibrary, scaleSkillMd, type ScaleLibrary } from './scale-library';

const LIBRARY: RenderTarget = { nav: 'nav-library', table: 'skill-table', row: 'skill-row', total: 1000 };
const ADAPTERS: RenderTarget = { nav: 'nav-adapters', table: 'adapter-table', row: 'adapter-row', total: 1000 };
/** Every skill name in the Library's default order (name, A to Z, as library-table.ts sorts). */
const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
const report = (page: string, samples: RenderSample[]) =>
  `${page}: drawn ${samples.map((s) => s.ms.toFixed(0)).join(', ')} ms (median ${median(samples.map((s) => s.ms)).toFixed(0)}), ` +
  `settled ${samples.map((s) => s.settledMs.toFixed(0)).join(', ')} ms`;
const NAMES = Array.from({ length: 1000 }, (_, i) => scaleSkillMd(i, 1).name).sort((a, b) => collator.compare(a, b));

describe('library and adapters at 1,000 rows', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let page: Page;
  let problems: string[];
  let filled: ScaleLibrary;

  const windowOf = async (table: string) => (await page.getByTestId(table).getAttribute('data-window')) ?? '';
  /** Scrolls the page's scrolling box (the table's nearest scrolling ancestor) to the bottom. */
  const scrollToBottom = (table: string) =>
    page.evaluate(`(() => {
      let box = document.querySelector('[data-testid="${table}"]').parentElement;
      while (box && !['auto', 'scroll'].includes(getComputedStyle(box).overflowY)) box = box.parentElement;
      box.scrollTop = box.scrollHeight;
    })()`);

  before(async () => {
    studio = await openStudio((dataDir) => {
      filled = fillScaleLibrary(dataDir, { skills: 1000, adapters: 1000 });
    });
    ({ page, problems } = studio);
    page.setDefaultTimeout(60_000);
    await page.goto(studio.host.url);
    await page.getByTestId('skill-table').waitFor();
  });

  after(async () => {
    await studio?.close();
  });

  test('the fixture holds 1,000 skills with their versions and 1,000 adapters', () => {
    assert.equal(filled.skills, 1000);
    assert.equal(filled.adapters, 1000);
    assert.ok(filled.versions > 1000, `${filled.versions} versions`);
  });

  test('the Library lists all 1,000 skills and draws only the rows in view', async (t) => {
    await page.getByTestId('nav-adapters').click();
    const samples = [];
    for (let k = 0; k < 3; k++) {
      samples.push(await timeNavigation(page, LIBRARY));
      await page.getByTestId('nav-adapters').click();
    }
    await page.getByTestId('nav-library').click();
    t.diagnostic(report('Library', samples));
    assert.match(await page.getByTestId('library-count').innerText(), /^1000 skills$/);
    const table = page.getByTestId('skill-table');
    assert.equal(await table.getAttribute('data-total'), '1000');
    const drawn = await page.getByTestId('skill-row').count();
    assert.ok(drawn > 10 && drawn < 200, `${drawn} rows in the DOM`);
    assert.match(await windowOf('skill-table'), /^0:\d+$/);
    assert.equal(await page.getByTestId('skill-row').first().getAttribute('data-skill-name'), NAMES[0]);
    // A skill with three versions shows them (every third skill, odd index: 2 + 1).
    const three = scaleSkillMd(3, 1).name;
    await page.getByTestId('library-search').fill(three);
    await until(async () => (await page.getByTestId('skill-row').count()) === 1, 'the search finds one skill');
    assert.equal(await page.getByTestId('skill-row').locator('td.num').innerText(), '3');
    await page.getByTestId('library-search').fill('');
    await until(async () => (await table.getAttribute('data-total')) === '1000', 'the whole library is back');
    await screenshot(page, 'library-scale-01');
  });

  test('scrolling to the end of the Library draws its last rows', async () => {
    await scrollToBottom('skill-table');
    const last = page.locator(`[data-testid="skill-row"][data-skill-name="${NAMES.at(-1)}"]`);
    await last.waitFor();
    assert.match(await windowOf('skill-table'), /^\d+:1000$/);
    assert.ok((await page.getByTestId('skill-row').count()) < 200);
    // Rows drawn after a scroll work like the first ones: the link opens the skill.
    await last.locator('td.name a').click();
    await until(async () => page.url().includes(`#/skill/${NAMES.at(-1)}`), 'the skill page opens');
    await page.getByTestId('nav-library').click();
    await page.getByTestId('skill-table').waitFor();
  });

  test('sorting the Library brings the other end of the list into view', async () => {
    await page.getByTestId('sort-name').click(); // name, descending
    await until(
      async () => (await page.getByTestId('skill-table').getAttribute('data-sort')) === 'name:desc',
      'sorted',
    );
    assert.equal(await page.getByTestId('skill-row').first().getAttribute('data-skill-name'), NAMES.at(-1));
    assert.match(await windowOf('skill-table'), /^0:\d+$/, 'a new order starts at the top');
    await page.getByTestId('sort-name').click();
  });

  test('the Adapters page lists all 1,000 adapters and draws only the rows in view', async (t) => {
    await page.getByTestId('nav-library').click();
    const samples = [];
    for (let k = 0; k < 3; k++) {
      samples.push(await timeNavigation(page, ADAPTERS));
      await page.getByTestId('nav-library').click();
    }
    await page.getByTestId('nav-adapters').click();
    t.diagnostic(report('Adapters', samples));
    await page.getByTestId('adapter-table').waitFor();
    assert.match(await page.getByTestId('adapter-count').innerText(), /^1000 adapters$/);
    assert.equal(await page.getByTestId('adapter-table').getAttribute('data-total'), '1000');
    const drawn = await page.getByTestId('adapter-row').count();
    assert.ok(drawn > 10 && drawn < 200, `${drawn} rows in the DOM`);
    for (const kind of ['instant', 'import', 'merge']) {
      assert.ok((await page.locator(`[data-testid="adapter-row"][data-kind="${kind}"]`).count()) > 0, `a ${kind} row`);
    }
    await screenshot(page, 'adapters-scale-01');
  });

  test('the oldest adapter, at the end of the list, can be scrolled to and opened', async () => {
    await scrollToBottom('adapter-table');
    await until(async () => /^\d+:1000$/.test(await windowOf('adapter-table')), 'the window reaches the end');
    const last = page.getByTestId('adapter-row').last();
    const id = (await last.getAttribute('data-adapter-id'))!;
    await last.click();
    await until(
      async () =>
        (await page
          .getByTestId('adapter-panel-id')
          .innerText()
          .catch(() => '')) === id,
      `the panel shows ${id}`,
    );
    assert.deepEqual(problems, []);
  });
});
