// The Playground in Chromium against `pskills serve`: the default bundle loads on first use, load the
// tiny fixture bundle by path, generate greedily with streamed output and stats, get the same text
// again in a new chat, stop a long run, and show a bad folder's error inline. The fixture is a random
// model: its text is gibberish, by design. Adapters and multi-turn chat: playground-chat.spec.ts.
// Run: node --import tsx --test tests/e2e/playground.spec.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');
const DEFAULT_BUNDLE_ID = (
  JSON.parse(readFileSync(join(ROOT, 'resources/bundles/default/bundle.json'), 'utf8')) as { id: string }
).id;
const BAD_BUNDLE = join(ROOT, 'tests/fixtures/no-such-bundle');

/** What the in-page watcher saw of one run: each status in order, and the output text while running. */
interface Watch {
  statuses: string[];
  streamed: string[];
}

/**
 * Records the output panel's status changes and streamed text from inside the page. The tiny model
 * writes a token a millisecond, faster than Playwright can poll, so the page itself must watch. With
 * `stopOnFirstToken`, it also clicks Stop as soon as text has streamed: a Playwright click's round
 * trip can outlast a whole 200-token run (so the Stop test asks for 800).
 */
function watchScript(stopOnFirstToken: boolean): string {
  return `(() => {
    const panel = document.querySelector('[data-testid="gen-output-panel"]');
    const w = { statuses: [], streamed: [] };
    window.__playgroundWatch = w;
    let stopped = false;
    const obs = new MutationObserver(() => {
      const status = panel.dataset.status;
      if (w.statuses[w.statuses.length - 1] !== status) w.statuses.push(status);
      if (status === 'running') {
        const text = panel.querySelector('[data-testid="gen-output"]').textContent;
        if (text) {
          w.streamed.push(text);
          if (${stopOnFirstToken} && !stopped) {
            stopped = true;
            document.querySelector('[data-testid="gen-stop"]').click();
          }
        }
      } else if (w.statuses.includes('running')) obs.disconnect();
    });
    obs.observe(panel, { attributes: true, childList: true, subtree: true, characterData: true });
  })()`;
}

/** Clicks Generate and waits until the run has been seen running and then ending. */
async function generate(page: Page, { stop = false } = {}): Promise<Watch> {
  await page.evaluate(watchScript(stop));
  await page.getByTestId('gen-generate').click();
  let watch: Watch = { statuses: [], streamed: [] };
  await until(
    async () => {
      watch = (await page.evaluate('window.__playgroundWatch')) as Watch;
      const last = watch.statuses.at(-1);
      return watch.statuses.includes('running') && last !== undefined && last !== 'running';
    },
    'the generation ends',
    60_000,
  );
  return watch;
}

async function setNumber(page: Page, testId: string, value: number): Promise<void> {
  await page.getByTestId(testId).fill(String(value));
}

describe('playground in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let greedyText = '';

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
  });

  after(async () => {
    await studio?.close();
  });

  test('opening the Playground loads the default bundle, with no click', async () => {
    assert.equal((await apiCall<{ loaded: boolean }>(host, 'engine.info', {})).loaded, false, 'nothing loaded before');
    await page.goto(host.url);
    await page.getByTestId('nav-playground').click();
    await until(
      async () => (await page.getByTestId('playground-bundle').count()) > 0,
      'the default bundle is loaded',
      60_000,
    );
    assert.equal(await page.getByTestId('playground-bundle').innerText(), DEFAULT_BUNDLE_ID);
    assert.equal(await page.getByTestId('bundle-id').innerText(), DEFAULT_BUNDLE_ID);
    assert.equal(await page.getByTestId('bundle-hypernet').innerText(), 'yes');
    assert.ok(await page.getByTestId('gen-generate').isEnabled(), 'ready to send');
    await screenshot(page, 'playground-01-default');
  });

  test('loads the fixture bundle by path and shows its info', async () => {
    await page.getByTestId('bundle-dir').fill(BUNDLE);
    await page.getByTestId('bundle-load').click();
    await page
      .getByTestId('bundle-id')
      .filter({ hasText: /^tiny-random$/ })
      .waitFor(); // replaces the default bundle
    assert.equal(await page.getByTestId('bundle-family').innerText(), 'llama');
    assert.equal(await page.getByTestId('bundle-hypernet').innerText(), 'no');
    const info = await page.getByTestId('bundle-info').innerText();
    for (const row of [
      /Hidden\s+64/,
      /Layers\s+2/,
      /Heads\s+4 · 2 KV/,
      /Vocab\s+384/,
      /Context\s+256 positions/,
      /Load time\s+\d+ ms/,
    ]) {
      assert.match(info, row);
    }
    assert.match(info, /LoRA targets\s+q\s*k\s*v\s*o\s*gate\s*up\s*down/);
    assert.equal(await page.getByTestId('playground-bundle').innerText(), 'tiny-random');
    assert.ok(await page.getByTestId('gen-generate').isEnabled());
    await screenshot(page, 'playground-02-bundle');
  });

  test('generates greedily: tokens stream in, then the stats show', async () => {
    await page.getByTestId('gen-system').fill('You are a terse assistant.');
    await page.getByTestId('gen-user').fill('Write one sentence about the sea.');
    await setNumber(page, 'gen-temperature', 0);
    await setNumber(page, 'gen-max-tokens', 16);
    const watch = await generate(page);
    assert.deepEqual(watch.statuses, ['running', 'done']);
    assert.ok(watch.streamed.length > 0, 'text appeared while the run was streaming');

    greedyText = await page.getByTestId('gen-output').innerText();
    assert.ok(greedyText.length > 0, 'the run produced text');
    assert.ok(greedyText.startsWith(watch.streamed[0]!), 'the streamed text is the start of the final text');

    await page.getByTestId('gen-stats').waitFor();
    const completion = Number(await page.getByTestId('gen-completion-tokens').innerText());
    assert.ok(completion >= 1 && completion <= 16, `completion tokens: ${completion}`);
    assert.ok(Number(await page.getByTestId('gen-prompt-tokens').innerText()) > 0);
    assert.match(await page.getByTestId('gen-ttft').innerText(), /^[\d.,]+ ms$/);
    assert.match(await page.getByTestId('gen-tps').innerText(), /^\d+\.\d$/);
    const reason = await page.getByTestId('gen-finish-reason').innerText();
    assert.ok(['length', 'eos'].includes(reason), `finish reason: ${reason}`);
    if (reason === 'length') assert.equal(completion, 16);
    await screenshot(page, 'playground-03-generated');
  });

  test('greedy generation is deterministic: the same text again in a new chat', async () => {
    assert.equal(await page.getByTestId('gen-user').inputValue(), '', 'a sent message leaves the input');
    await page.getByTestId('chat-new').click();
    assert.equal(await page.getByTestId('chat-transcript').count(), 0, 'New chat forgets the conversation');
    await page.getByTestId('gen-user').fill('Write one sentence about the sea.');
    const watch = await generate(page);
    assert.deepEqual(watch.statuses, ['running', 'done']);
    assert.equal(await page.getByTestId('gen-output').innerText(), greedyText);
  });

  test('generates from a raw prompt, without the chat template', async () => {
    await page.getByTestId('gen-mode-raw').click();
    await page.getByTestId('gen-prompt').fill('Once upon a time');
    await setNumber(page, 'gen-max-tokens', 8);
    const watch = await generate(page);
    assert.deepEqual(watch.statuses, ['running', 'done']);
    const completion = Number(await page.getByTestId('gen-completion-tokens').innerText());
    assert.ok(completion >= 1 && completion <= 8, `completion tokens: ${completion}`);
    await page.getByTestId('gen-mode-chat').click();
    await page.getByTestId('gen-user').waitFor();
  });

  test('an out-of-range setting is named before anything is sent', async () => {
    await setNumber(page, 'gen-top-p', 0);
    await page.getByTestId('gen-generate').click();
    assert.match(await page.getByTestId('gen-form-error').innerText(), /^Top-p must be more than 0\.$/);
    assert.equal(await page.getByTestId('gen-output-panel').getAttribute('data-status'), 'done');
    await setNumber(page, 'gen-top-p', 0.95);
  });

  test('Stop cancels a long generation', async () => {
    // 800 tokens (within the 1,024 positions): on a quiet machine the tiny model wrote 200 before Stop's round trip landed.
    await setNumber(page, 'gen-max-tokens', 800);
    await page.getByTestId('gen-user').fill('Tell a long story.');
    const watch = await generate(page, { stop: true });
    assert.deepEqual(watch.statuses, ['running', 'cancelled']);
    await page.getByTestId('gen-cancelled').waitFor();
    const status = await page.getByTestId('gen-status').innerText();
    const streamed = Number(/stopped after (\d+) streamed tokens/.exec(status)?.[1]);
    assert.ok(streamed >= 1 && streamed < 800, `stopped after ${streamed} of 800 tokens`);
    // The API either rejects with 'cancelled' (no stats) or returns finishReason 'cancelled'.
    if (await page.getByTestId('gen-stats').count()) {
      assert.equal(await page.getByTestId('gen-finish-reason').innerText(), 'cancelled');
    }
    assert.ok(await page.getByTestId('gen-generate').isEnabled(), 'Generate is back');
    await screenshot(page, 'playground-04-cancelled');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });

  // Last: Chromium logs the expected HTTP 404 of this call as a console error.
  test('a bad bundle folder shows its error inline, naming the path', async () => {
    await page.getByTestId('bundle-dir').fill(BAD_BUNDLE);
    await page.getByTestId('bundle-load').click();
    const error = page.getByTestId('bundle-error').getByTestId('error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'not_found');
    assert.ok((await error.innerText()).includes(BAD_BUNDLE), 'the error names the folder');
    // The bundle that was loaded stays loaded.
    assert.equal(await page.getByTestId('bundle-id').innerText(), 'tiny-random');
    await screenshot(page, 'playground-05-bad-path');
  });
});
