// A person's own skill (docs/guide.md, "Your own skill"), in Chromium against `pskills serve` on the
// real default bundle: a rule written in plain words ("Always begin the answer with the word
// ZORBLAX") gets a suggested checker on the compare page; one click stores it as a test with the
// compare prompt, and the next comparison marks every column. The default model's note says what it
// can follow, rewrites the rule in the example skills' shape and links to the Models page. The
// command palette runs Compare, Distil and Try an example, not only navigation.
// Run: node --import tsx --test tests/e2e/own-skill.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, until, type Host, type Studio } from './harness';

const SKILL = 'zorblax-desk';
const BODY = `# Zorblax desk

Always begin the answer with the word ZORBLAX. Keep it short.

## Examples

- Log ticket 5521. → ZORBLAX ticket 5521 is noted.
`;

describe("a person's own skill on the compare page", { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', {
      name: SKILL,
      content: skillMd({ name: SKILL, description: 'Notes tickets for the zorblax desk.', body: BODY }),
    });
  });

  after(async () => {
    await studio?.close();
  });

  test('the rule in plain words gets a suggested checker, and the note rewrites it', async () => {
    await page.goto(host.url);
    await page.getByTestId('skill-row').first().waitFor({ timeout: 60_000 });
    await page.goto(`${host.origin}/#/skill/${SKILL}/compare`);
    await page.getByTestId('suggested-checks').waitFor({ timeout: 60_000 });
    const first = page.getByTestId('suggested-check').first();
    assert.equal(await first.getAttribute('data-kind'), 'prefix');
    assert.match(await first.innerText(), /Always begin the answer with the word ZORBLAX/);
    assert.match(await first.innerText(), /expects: the answer matches \/\^ZORBLAX\//);
    assert.ok(await first.getByTestId('suggested-check-add').isDisabled(), 'no prompt yet');
    const note = page.getByTestId('model-note-rewrite');
    assert.match(await note.innerText(), /Prefix the answer with `ZORBLAX:` and keep it on one line/);
    assert.equal((await page.getByTestId('default-model-note').locator('a[href="#/models"]').count()) > 0, true);
  });

  test('one click stores it as a test, and the comparison marks every column', async () => {
    await page.getByTestId('compare-prompt').fill('Log ticket 7310.');
    await page.getByTestId('suggested-check').first().getByTestId('suggested-check-add').click();
    await until(
      async () => (await page.getByTestId('suggested-check-add').first().innerText()) === 'Added as a test',
      'the test is stored',
    );
    const tests = await apiCall<{ tests: { id: string; prompt?: string; expect: unknown }[] }>(host, 'verify.tests', {
      name: SKILL,
    });
    assert.deepEqual(tests.tests, [
      { id: 'suggested-prefix-1', prompt: 'Log ticket 7310.', expect: { kind: 'regex', pattern: '^ZORBLAX' } },
    ]);
    assert.match(await page.getByTestId('compare-check-state').innerText(), /checker marks each answer/);
    await page.getByTestId('compare-run').click();
    await until(
      async () => (await page.getByTestId('compare-panel').getAttribute('data-status')) === 'done',
      'the comparison ends',
      300_000,
    );
    // Every column that answered (Wrong skill is left out: the library has no other skill).
    const answered = await page.locator('[data-testid="compare-column"][data-state="done"]').count();
    assert.ok(answered >= 3, `${answered} columns answered`);
    assert.equal(await page.getByTestId('column-verdict').count(), answered, 'every answer has ✓ or ✗');
    for (const c of ['none', 'in_context'])
      assert.equal(
        await page
          .locator(`[data-testid="compare-column"][data-condition="${c}"] [data-testid="column-verdict"]`)
          .count(),
        1,
        c,
      );
    assert.match(await page.getByTestId('compare-announce').innerText(), /No skill (passes|fails), In context/);
  });

  test('the command palette runs commands: Compare, Distil, Try an example', async () => {
    const palette = async (query: string, command: string) => {
      await page.keyboard.press('Control+k');
      await page.getByTestId('palette-input').fill(query);
      const option = page.locator(`[data-testid="palette-option"][data-command="${command}"]`);
      await option.waitFor();
      await option.click();
      await page.getByTestId('palette').waitFor({ state: 'detached' });
    };
    const status = () => page.getByTestId('compare-panel').getAttribute('data-status');
    const finished = async () => {
      const n = await page.getByTestId('compare-total').innerText();
      await palette('compare', 'compare');
      await until(
        async () => (await status()) === 'done' && (await page.getByTestId('compare-total').innerText()) !== n,
        'the palette compares',
        300_000,
      );
    };
    await finished();

    await palette('distil', 'distil');
    await until(
      async () => (await page.getByTestId('distill-panel').getAttribute('data-status')) === 'done',
      'the palette distils',
      600_000,
    );
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-folded'), 'true');
    const adapters = await apiCall<{ recipe: { kind: string } }[]>(host, 'adapters.list', {});
    assert.equal(adapters.filter((a) => a.recipe.kind === 'distill').length, 1);

    await palette('try an example', 'try-example');
    await page.getByTestId('example-guide').waitFor({ timeout: 60_000 });
  });

  test('a language rule gets a language checker that one click adds as a test', async () => {
    const name = 'parle-desk';
    await apiCall(host, 'skills.save', {
      name,
      content: skillMd({
        name,
        description: 'Answers the parle desk.',
        body: '# Parle desk\n\nAlways answer in French, in one short sentence.\n',
      }),
    });
    await page.goto(`${host.origin}/#/skill/${name}/compare`);
    const language = page.locator('[data-testid="suggested-check"][data-kind="language"]');
    await language.waitFor({ timeout: 60_000 });
    assert.match(await language.innerText(), /Always answer in French/);
    assert.match(await language.innerText(), /expects: the answer is written in French/);
    await page.getByTestId('compare-prompt').fill('Where is the station?');
    await language.getByTestId('suggested-check-add').click();
    await until(
      async () => (await language.getByTestId('suggested-check-add').innerText()) === 'Added as a test',
      'the language test is stored',
    );
    const tests = await apiCall<{ tests: { prompt?: string; expect: unknown }[] }>(host, 'verify.tests', { name });
    assert.deepEqual(
      tests.tests.map((t) => [t.prompt, t.expect]),
      [['Where is the station?', { kind: 'language', language: 'fr' }]],
    );
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
