// The Skill page's Compile and Compare in Chromium against `pskills serve`, on the tiny hypernetwork
// fixture bundle (tests/fixtures/bundle-hyper: random weights, so the text is gibberish by design):
// compile with progress and a cached second compile, the adapter on the Adapters page, the four
// compare columns streaming side by side with their numbers, Stop, and the API's errors on a bundle
// without a hypernetwork.
// Run: node --import tsx --test tests/e2e/skill-lab.spec.ts
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ENGLISH_BODY, skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');
const PLAIN_BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');
const SKILL = 'review-prs';
/** Compare's default wrong skill for SKILL: the least similar one (LONG shares its description). */
const OTHER = 'sea-shanties';
/** Another dissimilar skill, chosen in the wrong-skill picker. */
const PICKED = 'tea-notes';
/** Long enough (hundreds of encoder chunks) that its compile runs for seconds: progress is seen and cancelled. */
const LONG = 'long-guide';
const OTHER_BODY = `# Writing sea shanties

Use this skill to write a short sea shanty with a call and a response.

## Steps

1. Pick a work rhythm: hauling, pumping or the capstan.
2. Write the call as one line, the response as a short refrain.
`;

/** The text of columns that are streaming (not the placeholders of columns still waiting). */
const STREAMING_TEXT = '[data-testid="compare-column"][data-state="streaming"] [data-testid="column-output"]';

/** What an in-page observer saw: each data-status of a panel in order, and texts sampled while it ran. */
interface Watch {
  statuses: string[];
  seen: string[];
}

/**
 * Records a panel's status changes and, while it runs, the text of `sample` elements, from inside
 * the page: the tiny model and encoder are faster than Playwright can poll. With `clickOnSample`,
 * it clicks that button as soon as some sample text appeared (a Playwright click can outlast a run).
 */
function watch(page: Page, panel: string, sample: string, clickOnSample: string | null = null): Promise<void> {
  return page.evaluate(`(() => {
    const panel = document.querySelector('[data-testid="${panel}"]');
    const w = { statuses: [panel.dataset.status], seen: [] };
    window.__watch = w;
    let clicked = false;
    const obs = new MutationObserver(() => {
      const status = panel.dataset.status;
      if (w.statuses[w.statuses.length - 1] !== status) w.statuses.push(status);
      if (status === 'running') {
        const texts = [...panel.querySelectorAll('${sample}')].map((e) => e.textContent.trim()).filter(Boolean);
        if (texts.length) {
          const joined = texts.join(' | ');
          if (w.seen[w.seen.length - 1] !== joined) w.seen.push(joined);
          const button = ${JSON.stringify(clickOnSample)};
          if (button && !clicked) {
            clicked = true;
            document.querySelector('[data-testid="' + button + '"]').click();
          }
        }
      } else if (w.statuses.includes('running')) obs.disconnect();
    });
    obs.observe(panel, { attributes: true, childList: true, subtree: true, characterData: true });
  })()`);
}

/** Waits until the watched panel has been running and then stopped running. */
async function watched(page: Page, what: string, timeoutMs = 120_000): Promise<Watch> {
  let w: Watch = { statuses: [], seen: [] };
  await until(
    async () => {
      w = (await page.evaluate('window.__watch')) as Watch;
      const last = w.statuses.at(-1);
      return w.statuses.includes('running') && last !== undefined && last !== 'running';
    },
    what,
    timeoutMs,
  );
  return w;
}

describe('compile and compare in the browser', { timeout: 400_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let compiledId = '';
  let compiledRank = '';

  const column = (condition: string) => page.locator(`[data-testid="compare-column"][data-condition="${condition}"]`);

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', { name: SKILL, content: skillMd({ name: SKILL }) });
    await apiCall(host, 'skills.save', {
      name: OTHER,
      content: skillMd({ name: OTHER, description: 'Write a sea shanty.', body: OTHER_BODY }),
    });
    await apiCall(host, 'skills.save', {
      name: PICKED,
      content: skillMd({
        name: PICKED,
        description: 'Brew green tea.',
        body: '# Tea\n\nBrew green tea at 80 degrees for two minutes.\n',
      }),
    });
    await apiCall(host, 'skills.save', {
      name: LONG,
      content: skillMd({ name: LONG, body: Array(1000).fill(ENGLISH_BODY).join('\n') }),
    });
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('the Skill page opens Compile & compare on the hypernetwork bundle', async () => {
    await page.goto(host.url);
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-tab-compare').click();
    await page.waitForURL(`**/#/skill/${SKILL}/compare`);
    await page.getByTestId('skill-lab').waitFor();
    assert.equal(await page.getByTestId('lab-bundle-id').innerText(), 'tiny-random-hyper');
    assert.equal(await page.getByTestId('lab-no-hypernet').count(), 0);
    assert.equal(await page.getByTestId('compare-column').count(), 4);
    assert.deepEqual(
      await page.getByTestId('compare-column').evaluateAll((els) => els.map((e) => e.getAttribute('data-condition'))),
      ['none', 'in_context', 'instant', 'wrong_skill'],
    );
    assert.ok(await page.getByTestId('compare-run').isDisabled(), 'Run waits for a prompt');
  });

  test('Compile shows chunk progress, then the adapter, its rank and time', async () => {
    await watch(page, 'compile-panel', '[data-testid="compile-chunks"]');
    await page.getByTestId('compile-start').click();
    const w = await watched(page, 'the compile ends');
    assert.deepEqual(w.statuses, ['idle', 'running', 'done']);
    assert.ok(w.seen.length > 1, `progress was shown: ${JSON.stringify(w.seen.slice(0, 3))}`);
    const chunks = w.seen.map((s) => /^chunk (\d+) of (\d+)$/.exec(s)).filter((m) => m !== null);
    assert.equal(chunks.length, w.seen.length, `every progress line reads "chunk i of k": ${w.seen[0]}`);
    const k = Number(chunks[0]![2]);
    assert.ok(k > 1, `a long skill is several chunks (${k})`);
    assert.ok(chunks.every((m) => Number(m[2]) === k && Number(m[1]) <= k));
    assert.ok(Number(chunks.at(-1)![1]) > Number(chunks[0]![1]), 'the chunk count went up');

    await page.getByTestId('compile-result').waitFor();
    compiledId = await page.getByTestId('compile-adapter').innerText();
    assert.match(compiledId, /^[0-9a-f]{12}$/);
    compiledRank = await page.getByTestId('compile-rank').innerText();
    // The hypernetwork gives rank 2 per chunk; the chunks' adapters are combined exactly.
    assert.ok(Number(compiledRank) >= 2 && Number(compiledRank) % 2 === 0, `rank ${compiledRank}`);
    assert.match(await page.getByTestId('compile-ms').innerText(), /^[\d.,]+ ms$/);
    assert.equal(await page.getByTestId('compile-cached').innerText(), 'new adapter');
    await screenshot(page, 'skill-lab-02-compiled');
  });

  test('compiling the same version again finds the stored adapter', async () => {
    await page.getByTestId('compile-start').click();
    await until(
      async () =>
        (await page.getByTestId('compile-panel').getAttribute('data-status')) === 'done' &&
        (await page.getByTestId('compile-cached').count()) > 0,
      'the second compile ends',
    );
    assert.equal(await page.getByTestId('compile-cached').innerText(), 'cached: already in the library');
    assert.equal(await page.getByTestId('compile-adapter').innerText(), compiledId);
  });

  test('the compiled adapter is on the Adapters page, with its skill', async () => {
    await page.getByTestId('compile-adapter').click();
    await page.waitForURL(`**/#/adapters/${compiledId}`);
    const row = page.locator(`[data-testid="adapter-row"][data-adapter-id="${compiledId}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute('data-kind'), 'instant');
    assert.equal(await row.getByTestId('adapter-skill').innerText(), `${SKILL}@1`);
    assert.equal(await row.getByTestId('adapter-rank').innerText(), compiledRank);
    assert.match(await page.getByTestId('lineage-summary').innerText(), /perceiver hypernetwork/);
    await page.goBack();
    await page.getByTestId('skill-lab').waitFor();
    assert.equal(await page.getByTestId('compile-adapter').innerText(), compiledId, 'the result is kept');
  });

  test('Compare streams four columns side by side, each with its numbers', async () => {
    await page.getByTestId('compare-prompt').fill('How should I review a pull request?');
    await page.getByTestId('compare-max-tokens').fill('24');
    await watch(page, 'compare-panel', STREAMING_TEXT);
    await page.getByTestId('compare-run').click();
    const w = await watched(page, 'the comparison ends');
    assert.deepEqual(w.statuses, ['idle', 'running', 'done']);
    assert.ok(
      w.seen.some((s) => s.includes(' | ')),
      'several columns had text while the run streamed',
    );

    const numbers: Record<string, { prompt: number; text: string; adapter: string | null }> = {};
    for (const condition of ['none', 'in_context', 'instant', 'wrong_skill']) {
      const col = column(condition);
      assert.equal(await col.getAttribute('data-state'), 'done', condition);
      const prompt = Number(await col.getByTestId('column-prompt-tokens').innerText());
      assert.ok(prompt > 0, `${condition}: prompt tokens ${prompt}`);
      assert.match(await col.getByTestId('column-ttft').innerText(), /^[\d.,]+ ms$/);
      assert.match(await col.getByTestId('column-tps').innerText(), /^\d+\.\d$/);
      const completion = Number((await col.getByTestId('column-completion-tokens').innerText()).split(' ')[0]);
      assert.ok(completion >= 1 && completion <= 24, `${condition}: ${completion} tokens`);
      const adapter = (await col.getByTestId('column-adapter').count())
        ? await col.getByTestId('column-adapter').innerText()
        : null;
      numbers[condition] = { prompt, text: await col.getByTestId('column-output').innerText(), adapter };
    }
    assert.ok(numbers.in_context!.prompt > numbers.none!.prompt, 'the skill text makes the in-context prompt longer');
    assert.equal(numbers.instant!.prompt, numbers.none!.prompt, 'the adapter costs no prompt tokens');
    assert.equal(numbers.none!.adapter, null);
    assert.equal(numbers.instant!.adapter, compiledId);
    assert.ok(
      numbers.wrong_skill!.adapter && numbers.wrong_skill!.adapter !== compiledId,
      'wrong_skill runs another adapter',
    );
    assert.match(
      await page.getByTestId('compare-total').innerText(),
      new RegExp(`4 columns in [\\d,]+ ms · wrong skill: ${OTHER}@1`),
    );
    // compare compiled the wrong skill's adapter: the sidebar's count follows
    await until(
      async () => (await page.getByTestId('nav-adapters').locator('.count').innerText()) === '2',
      'the adapter count is 2',
    );
    await screenshot(page, 'skill-lab-03-compare');
  });

  test('the wrong-skill picker names the automatic choice and runs the skill chosen', async () => {
    const picker = page.getByTestId('compare-wrong-skill');
    const options = await picker.locator('option').allInnerTexts();
    assert.equal(options[0], `Auto: ${OTHER}`, 'Auto names what compare.run picks');
    assert.deepEqual(options.slice(1).sort(), [LONG, OTHER, PICKED].sort(), 'every other skill, not this one');
    const wrongBefore = await column('wrong_skill').getByTestId('column-adapter').innerText();
    await picker.selectOption(PICKED);
    await page.getByTestId('compare-max-tokens').fill('4');
    await page.getByTestId('compare-run').click();
    await until(
      async () =>
        (await page.getByTestId('compare-total').count()) > 0 &&
        (await page.getByTestId('compare-total').innerText()).includes(PICKED),
      'the run with the picked skill ends',
    );
    assert.match(await page.getByTestId('compare-total').innerText(), new RegExp(`wrong skill: ${PICKED}@1$`));
    assert.notEqual(
      await column('wrong_skill').getByTestId('column-adapter').innerText(),
      wrongBefore,
      "the picked skill's adapter",
    );
    await picker.selectOption('');
  });

  test('Stop ends a long comparison; the columns keep what streamed', async () => {
    await page.getByTestId('compare-max-tokens').fill('200');
    // The tiny model can finish all four columns before the Stop click reaches the engine worker (on a
    // loaded machine it did): a run that ends 'done' is run again, and Stop must win one of five.
    let w: Watch = { statuses: [], seen: [] };
    for (let attempt = 0; attempt < 5 && w.statuses.at(-1) !== 'cancelled'; attempt++) {
      await watch(page, 'compare-panel', STREAMING_TEXT, 'compare-stop');
      await page.getByTestId('compare-run').click();
      w = await watched(page, 'the stopped comparison ends');
    }
    assert.deepEqual(w.statuses, ['done', 'running', 'cancelled']);
    const states = await page
      .getByTestId('compare-column')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
    // Stopped before the end: each column says so (the API rejects with 'cancelled'), or, where the
    // engine returned what it had, shows its numbers with finish reason 'cancelled'.
    for (const s of states) assert.ok(s === 'stopped' || s === 'done', `column state ${s}`);
    if (states.includes('stopped')) {
      const lines = await page.getByTestId('column-stopped').allInnerTexts();
      assert.ok(
        lines.every((l) => /^stopped after \d+ tokens$/.test(l)),
        lines.join(' / '),
      );
      assert.ok(
        lines.some((l) => !l.includes('after 0 tokens')),
        'some column had streamed before Stop',
      );
    }
    assert.ok(await page.getByTestId('compare-run').isEnabled(), 'Run is back');
    await screenshot(page, 'skill-lab-04-compare-stopped');
  });

  test('Cancel stops a long compile midway and stores nothing', async () => {
    await page.goto(`${host.origin}/#/skill/${LONG}/compare`);
    await page.getByTestId('skill-lab').waitFor();
    await page.getByTestId('compile-start').click();
    let progress: RegExpExecArray | null = null;
    await until(
      async () => {
        const chunks = page.getByTestId('compile-chunks');
        progress = (await chunks.count()) ? /^chunk (\d+) of (\d+)$/.exec(await chunks.innerText()) : null;
        return progress !== null && Number(progress[1]) > 0;
      },
      'the long compile shows progress',
      60_000,
    );
    assert.equal(await page.getByTestId('compile-panel').getAttribute('data-status'), 'running');
    assert.equal(await page.getByRole('progressbar', { name: 'Compile progress' }).count(), 1);
    await screenshot(page, 'skill-lab-01-compiling');

    await page.getByTestId('compile-cancel').click();
    await until(
      async () => (await page.getByTestId('compile-panel').getAttribute('data-status')) !== 'running',
      'the compile stops',
      60_000,
    );
    // a compile that finished before the click would read 'done': name what was seen
    assert.equal(await page.getByTestId('compile-panel').getAttribute('data-status'), 'cancelled');
    const [, done, total] = /^chunk (\d+) of (\d+)$/.exec(await page.getByTestId('compile-chunks').innerText())!;
    assert.ok(Number(done) < Number(total), `cancelled at chunk ${done} of ${total}`);
    assert.match(await page.getByTestId('compile-progress').innerText(), /^Cancelled/);
    assert.equal(await page.getByTestId('compile-result').count(), 0);
    assert.ok(await page.getByTestId('compile-start').isEnabled(), 'Compile is back');
    await screenshot(page, 'skill-lab-05-compile-cancelled');
    const adapters = await apiCall<Array<{ skill: { name: string } | null }>>(host, 'adapters.list', {});
    assert.ok(!adapters.some((a) => a.skill?.name === LONG), 'a cancelled compile stores no adapter');
  });

  test('on a bundle without a hypernetwork, Compile says so and Compare runs the columns that need none', async () => {
    await apiCall(host, 'engine.loadBundle', { dir: PLAIN_BUNDLE });
    await page.getByTestId('nav-library').click();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${OTHER}"]`).click();
    await page.getByTestId('skill-tab-compare').click();
    await page.getByTestId('lab-no-hypernet').waitFor();
    await page.getByTestId('compare-prompt').fill('Write a shanty.');
    await page.getByTestId('compare-run').click();
    await until(
      async () => (await page.getByTestId('compare-panel').getAttribute('data-status')) === 'done',
      'the comparison finishes',
    );
    for (const condition of ['none', 'in_context'])
      assert.equal(await column(condition).getByTestId('error').count(), 0);
    await screenshot(page, 'skill-lab-06-no-hypernet');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});

describe('the bundle line follows the bundle a compile loaded', { timeout: 200_000 }, () => {
  let studio: Studio | undefined;

  after(async () => {
    await studio?.close();
  });

  test('no bundle loaded when the page opens; after Compile the line names the active one', async () => {
    // The fixture made active (as the Models page does), not yet loaded: Compile loads it on first use.
    studio = await openStudio((dataDir) => {
      mkdirSync(join(dataDir, 'bundles'), { recursive: true });
      writeFileSync(join(dataDir, 'bundles', 'active.json'), JSON.stringify({ dir: HYPER_BUNDLE }) + '\n');
    });
    const { host, page, problems } = studio;
    await apiCall(host, 'skills.save', { name: SKILL, content: skillMd({ name: SKILL }) });
    await page.goto(`${host.url}#/skill/${SKILL}/compare`);
    await page.getByTestId('lab-bundle-none').waitFor();
    await page.getByTestId('compile-start').click();
    await page.getByTestId('compile-result').waitFor({ timeout: 120_000 });
    await until(
      async () => (await page.getByTestId('lab-bundle-id').count()) > 0,
      'the bundle line names the bundle the compile loaded',
    );
    assert.equal(await page.getByTestId('lab-bundle-id').innerText(), 'tiny-random-hyper');
    assert.equal(await page.getByTestId('lab-bundle-none').count(), 0);
    assert.deepEqual(problems, []);
  });
});
