// The Playground's multi-turn chat and adapter picker in Chromium against `pskills serve`, on the tiny
// hypernetwork fixture bundle (random weights: gibberish by design): each message is sent with the
// turns before it, New chat forgets them, and a generation runs with a skill (compiled on first use),
// a library adapter or the global adapter; adapters of another bundle are listed but disabled.
// Run: node --import tsx --test tests/e2e/playground-chat.spec.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');
const TINY_BUNDLE = join(ROOT, 'tests/fixtures/bundle-tiny');
const SKILL = 'review-prs';

interface Adapter {
  id: string;
  skill: { name: string; version: number } | null;
}

/** Sends the message and waits for the reply to end (seen from inside the page: the tiny model can
 *  finish before Playwright polls); returns its text and stats. */
async function send(
  page: Page,
  message: string,
): Promise<{ text: string; prompt: number; completion: number; adapter: string | null }> {
  await page.getByTestId('gen-user').fill(message);
  await page.evaluate(`(() => {
    const panel = document.querySelector('[data-testid="gen-output-panel"]');
    const seen = [panel.dataset.status];
    window.__chatWatch = seen;
    new MutationObserver(() => {
      if (seen[seen.length - 1] !== panel.dataset.status) seen.push(panel.dataset.status);
    }).observe(panel, { attributes: true });
  })()`);
  await page.getByTestId('gen-generate').click();
  await until(
    async () => {
      const seen = (await page.evaluate('window.__chatWatch')) as string[];
      return seen.includes('running') && seen.at(-1) !== 'running';
    },
    'the reply ends',
    60_000,
  );
  const panel = page.getByTestId('gen-output-panel');
  assert.equal(await panel.getAttribute('data-status'), 'done', await panel.innerText());
  const adapter = panel.getByTestId('gen-adapter');
  return {
    text: await page.getByTestId('gen-output').innerText(),
    prompt: Number(await page.getByTestId('gen-prompt-tokens').innerText()),
    completion: Number(await page.getByTestId('gen-completion-tokens').innerText()),
    adapter: (await adapter.count()) ? await adapter.innerText() : null,
  };
}

describe('playground chat and adapters in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let first = { text: '', prompt: 0, completion: 0 };

  const roles = () => page.getByTestId('chat-turn').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
  const option = (value: string) => page.locator(`[data-testid="adapter-select"] option[value="${value}"]`);

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', { name: SKILL, content: skillMd({ name: SKILL }) });
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('each message is sent with the turns before it', async () => {
    await page.goto(`${host.url}#/playground`);
    await page.getByTestId('playground-bundle').filter({ hasText: 'tiny-random-hyper' }).waitFor();
    await page.getByTestId('gen-temperature').fill('0');
    await page.getByTestId('gen-max-tokens').fill('8');
    first = await send(page, 'What is the first step?');
    assert.deepEqual(await roles(), ['user']);
    assert.ok(first.prompt > 0 && first.completion > 0);

    const second = await send(page, 'And after that?');
    assert.deepEqual(await roles(), ['user', 'assistant', 'user']);
    const turns = page.getByTestId('chat-turn');
    assert.equal(await turns.nth(0).locator('pre').innerText(), 'What is the first step?');
    assert.equal(await turns.nth(1).locator('pre').innerText(), first.text, 'the first reply is now a turn');
    assert.equal(await turns.nth(2).locator('pre').innerText(), 'And after that?');
    assert.ok(
      second.prompt > first.prompt + first.completion,
      `the second prompt (${second.prompt} tokens) holds the first exchange (${first.prompt} + ${first.completion})`,
    );
    await screenshot(page, 'playground-05-chat');

    await page.getByTestId('chat-new').click();
    assert.equal(await page.getByTestId('chat-turn').count(), 0);
    const again = await send(page, 'What is the first step?');
    assert.deepEqual(again, { ...first, adapter: null }, 'a new chat starts from nothing: the same greedy reply');
  });

  test('a skill chosen in the picker is compiled on first use and runs as the adapter', async () => {
    assert.equal(await page.getByTestId('playground-adapter').innerText(), 'base model');
    assert.ok(await option('global').isDisabled(), 'no global adapter yet');
    await page.getByTestId('adapter-select').selectOption(`skill:${SKILL}`);
    assert.equal(await page.getByTestId('playground-adapter').innerText(), `${SKILL}@latest`);
    await page.getByTestId('adapter-skill-version').selectOption('1');
    assert.equal(await page.getByTestId('playground-adapter').innerText(), `${SKILL}@1`);
    await page.getByTestId('chat-new').click();
    const r = await send(page, 'What is the first step?');
    const adapters = await apiCall<Adapter[]>(host, 'adapters.list', {});
    const compiled = adapters.find((a) => a.skill?.name === SKILL);
    assert.ok(compiled, 'the skill was compiled into the library');
    assert.equal(r.adapter, compiled.id);
    assert.notEqual(r.text, first.text, 'the adapter changes the reply');
    await until(
      async () => (await page.getByTestId('nav-adapters').locator('.count').innerText()) === '1',
      'the sidebar counts the new adapter',
    );
    await screenshot(page, 'playground-06-adapter');
  });

  test('a library adapter by id, and the global adapter once the bundle has one', async () => {
    const [compiled] = await apiCall<Adapter[]>(host, 'adapters.list', {});
    await page.getByTestId('adapter-select').selectOption(`library:${compiled!.id}`);
    assert.equal(await page.getByTestId('playground-adapter').innerText(), `adapter ${compiled!.id}`);
    await page.getByTestId('chat-new').click();
    assert.equal((await send(page, 'What is the first step?')).adapter, compiled!.id);

    const { version } = await apiCall<{ version: { version: number; adapter: string } }>(host, 'ema.update', {
      adapterId: compiled!.id,
    });
    await page.reload(); // the picker asks the bundle's global history when the Playground opens
    await page.getByTestId('playground-bundle').filter({ hasText: 'tiny-random-hyper' }).waitFor();
    await until(async () => !(await option('global').isDisabled()), 'the global adapter is offered');
    assert.equal(
      await option('global').innerText(),
      `Global adapter (v${version.version}, rank ${await globalRank()})`,
    );
    await page.getByTestId('adapter-select').selectOption('global');
    await page.getByTestId('gen-temperature').fill('0');
    await page.getByTestId('gen-max-tokens').fill('8');
    assert.equal((await send(page, 'What is the first step?')).adapter, version.adapter);
  });

  test("another bundle's adapters are listed but disabled, and skills need a hypernetwork", async () => {
    const [compiled] = await apiCall<Adapter[]>(host, 'adapters.list', {});
    await page.getByTestId('bundle-dir').fill(TINY_BUNDLE);
    await page.getByTestId('bundle-load').click();
    await page
      .getByTestId('playground-bundle')
      .filter({ hasText: /^tiny-random$/ })
      .waitFor();
    await until(async () => await option(`library:${compiled!.id}`).isDisabled(), 'the hyper adapter is disabled');
    assert.match(await option(`library:${compiled!.id}`).innerText(), /\(bundle tiny-random-hyper\)$/);
    assert.ok(await option(`skill:${SKILL}`).isDisabled(), 'no hypernetwork: no skill');
    await until(async () => await option('global').isDisabled(), 'no global adapter for this bundle');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });

  async function globalRank(): Promise<number> {
    const h = await apiCall<{ versions: Array<{ rank: number }> }>(host, 'ema.history', {});
    return h.versions[0]!.rank;
  }
});
