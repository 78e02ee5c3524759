// The Skill page's Tests tab in Chromium against `pskills serve`, on the tiny hypernetwork fixture
// bundle (random weights: "always" passes and "never" fails whatever it answers): the stored tests
// with the SkillWorld checker read-only, a new test refused while its regex is broken (row and field
// named), saved with the version, Verify in context and compiled with the pass rate and each outcome,
// a deleted row reverted, and unsaved edits guarded (the Leave dialog) when leaving the tab.
// Run: node --import tsx --test tests/e2e/skill-tests.spec.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { skillMd } from '../fixtures/skills/skill-md';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const HYPER_BUNDLE = join(ROOT, 'tests/fixtures/bundle-hyper');
const SKILL = 'tar-archives';
/** A skill stored without tests. */
const UNTESTED = 'brew-tea';
const BODY = `# Tar archives

## Steps

1. To pack a folder, run \`tar -czf out.tar.gz folder/\`.
2. To unpack, run \`tar -xzf out.tar.gz\`.
3. Always list the contents first with \`tar -tzf out.tar.gz\`.
`;
const TESTS = [
  {
    id: 'always',
    prompt: 'How do I unpack a .tar.gz file?',
    expect: { kind: 'not', of: { kind: 'contains', value: 'zq-never-zq' } },
  },
  {
    id: 'never',
    prompt: 'Pack the folder src.',
    expect: { kind: 'exact', value: 'no random model says 4711' },
    maxTokens: 8,
  },
];

describe('the Tests tab in the browser', { timeout: 600_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];

  const rows = () => page.getByTestId('test-row');
  const verifyStatus = (s: string) => async () =>
    (await page.getByTestId('verify-panel').getAttribute('data-status')) === s;

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', {
      name: SKILL,
      content: skillMd({ name: SKILL, description: 'Create and unpack tar archives.', body: BODY }),
    });
    await apiCall(host, 'verify.setTests', { name: SKILL, tests: TESTS });
    await apiCall(host, 'skills.save', { name: UNTESTED, content: skillMd({ name: UNTESTED }) });
    await apiCall(host, 'engine.loadBundle', { dir: HYPER_BUNDLE });
  });

  after(async () => {
    await studio?.close();
  });

  test('lists the stored tests; a broken new row is named and cannot be saved', async () => {
    await page.goto(host.url, { timeout: 120_000 });
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-tab-tests').click();
    await page.waitForURL(`**/#/skill/${SKILL}/tests`);
    await until(async () => (await rows().count()) === 2, 'the two stored tests show');
    assert.match(await page.getByTestId('tests-source').innerText(), /Stored with v1/);
    assert.match(await rows().nth(0).getByTestId('test-fixed').innerText(), /SkillWorld checker · read-only/);
    assert.equal(await rows().nth(0).getByTestId('test-expect').innerText(), 'not: contains "zq-never-zq"');
    assert.equal(await rows().nth(1).getByTestId('test-value').inputValue(), 'no random model says 4711');

    await page.getByTestId('tests-add').click();
    const added = rows().nth(2);
    await added.getByTestId('test-id').fill('lists');
    await added.getByTestId('test-prompt').fill('Which command lists an archive?');
    await added.getByTestId('test-kind').selectOption('regex');
    await added.getByTestId('test-value').fill('tar -[a-z]*t(');
    await until(
      async () => /expect\.pattern: unbalanced '\('/.test((await added.getByTestId('test-problems').innerText()) ?? ''),
      'the broken pattern is named',
    );
    assert.match(await added.getByTestId('test-problems').innerText(), /^Test 3 \("lists"\), expect\.pattern/);
    assert.match(await page.getByTestId('tests-problems').innerText(), /1 problem to fix before saving/);
    assert.ok(await page.getByTestId('tests-save').isDisabled());
    assert.match(await page.getByTestId('verify-blocked').innerText(), /save the tests first/);
    await screenshot(page, 'skill-tests-01-problem');

    await added.getByTestId('test-value').fill('tar -[a-z]*t');
    await added.getByTestId('test-flags').fill('i');
    await page.getByTestId('tests-problems').waitFor({ state: 'detached' });
    await page.getByTestId('tests-save').click();
    await until(
      async () =>
        (await page
          .getByTestId('tests-notice')
          .innerText()
          .catch(() => '')) === 'Saved 3 tests with v1.',
      'the save is confirmed',
    );
    const stored = await apiCall<{ tests: Array<{ id: string; expect: unknown }> }>(host, 'verify.tests', {
      name: SKILL,
    });
    assert.deepEqual(
      stored.tests.map((t) => t.id),
      ['always', 'never', 'lists'],
    );
    assert.deepEqual(stored.tests[2]!.expect, { kind: 'regex', pattern: 'tar -[a-z]*t', flags: 'i' });
  });

  test('tests that cannot fail are flagged before saving: a match-everything regex, then a No skill pass', async () => {
    await page.getByTestId('tests-add').click();
    const added = rows().nth(3);
    await added.getByTestId('test-id').fill('anything');
    await added.getByTestId('test-prompt').fill('Say anything at all.');
    await added.getByTestId('test-kind').selectOption('regex');
    for (const pattern of ['.*', '^', '(?:)']) {
      await added.getByTestId('test-value').fill(pattern);
      await until(
        async () =>
          /expect: every answer passes it/.test(
            (await added
              .getByTestId('test-problems')
              .innerText()
              .catch(() => '')) ?? '',
          ),
        `the regex /${pattern}/ is flagged`,
      );
      assert.ok(await page.getByTestId('tests-save').isDisabled(), `/${pattern}/ cannot be saved`);
    }
    // One character of anything: some answer fails it (the empty one), but the model's answer without
    // the skill passes, so saving stops once to say so; Save anyway stores it.
    await added.getByTestId('test-value').fill('[\\s\\S]');
    await page.getByTestId('tests-problems').waitFor({ state: 'detached' });
    await page.getByTestId('tests-save').click();
    await page.getByTestId('tests-no-skill').waitFor({ timeout: 60_000 });
    assert.match(await page.getByTestId('tests-no-skill-row').innerText(), /^Test 4 \("anything"\): No skill answered/);
    assert.equal(await page.getByTestId('tests-save').innerText(), 'Save anyway');
    const before = await apiCall<{ tests: unknown[] }>(host, 'verify.tests', { name: SKILL });
    assert.equal(before.tests.length, 3, 'nothing was saved yet');
    await page.getByTestId('tests-save').click();
    await until(
      async () =>
        (await page
          .getByTestId('tests-notice')
          .innerText()
          .catch(() => '')) === 'Saved 4 tests with v1.',
      'Save anyway stores it',
    );
    // The API refuses a match-everything regex itself.
    await assert.rejects(
      apiCall(host, 'verify.setTests', {
        name: SKILL,
        tests: [{ id: 'x', prompt: 'Hi', expect: { kind: 'regex', pattern: '' } }],
      }),
      /every answer passes it/,
    );
    await rows().nth(3).getByTestId('test-delete').click();
    await page.getByTestId('tests-save').click();
    await until(
      async () =>
        (await page
          .getByTestId('tests-notice')
          .innerText()
          .catch(() => '')) === 'Saved 3 tests with v1.',
      'back to three tests',
    );
  });

  test('Verify in context and compiled: the pass rate and each outcome', async () => {
    await page.getByTestId('verify-mode').selectOption('in_context');
    await page.getByTestId('verify-start').click();
    await until(verifyStatus('done'), 'verify in context finished', 300_000);
    const results = page.getByTestId('verify-result');
    assert.equal(await results.count(), 3);
    assert.equal(
      await page.locator('[data-testid="verify-result"][data-test-id="always"]').getAttribute('data-passed'),
      'true',
    );
    assert.equal(
      await page.locator('[data-testid="verify-result"][data-test-id="never"]').getAttribute('data-passed'),
      'false',
    );
    // The reason names the rule in words, not the checker spec's JSON.
    assert.match(
      await page.locator('[data-testid="verify-result"][data-test-id="never"]').innerText(),
      /does not pass: is exactly "no random model says 4711"/,
    );
    assert.doesNotMatch(await page.getByTestId('verify-panel').innerText(), /\{"/);
    assert.match(await page.getByTestId('verify-summary').innerText(), /passed \([1-2] of 3\) · skill in context · v1/);

    await page.getByTestId('verify-mode').selectOption('instant');
    await page.getByTestId('verify-start').click();
    await until(
      async () =>
        /instant adapter/.test(
          await page
            .getByTestId('verify-summary')
            .innerText()
            .catch(() => ''),
        ),
      'verify compiled finished',
      300_000,
    );
    assert.match(await page.getByTestId('verify-summary').innerText(), /instant adapter\s[0-9a-f]{12} · v1/);
    const rate = await page.getByTestId('verify-pass-rate').innerText();
    assert.match(rate, /^(33|67)%$/);
    // What good looks like: the in-context rate of the run before, beside this one.
    assert.match(await page.getByTestId('verify-in-context-rate').innerText(), /^(33|67)%$/);
    assert.match(await page.getByTestId('verify-beside').innerText(), /Beside it, in context: \d+%/);
    await page.getByTestId('verify-panel').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'skill-tests-02-verify');
  });

  test('a deleted row makes the tab dirty; Revert brings it back', async () => {
    await rows().nth(1).getByTestId('test-delete').click();
    await until(async () => (await rows().count()) === 2, 'the row is gone');
    assert.equal(await page.getByTestId('tests-view').getAttribute('data-dirty'), 'true');
    assert.ok(await page.getByTestId('verify-start').isDisabled());
    await page.getByTestId('tests-revert').click();
    await until(async () => (await rows().count()) === 3, 'the row is back');
    assert.equal(await page.getByTestId('tests-view').getAttribute('data-dirty'), 'false');
  });

  test('unsaved test edits are guarded: another tab or page asks first; Stay, Discard, Save and leave', async () => {
    const prompt = rows().nth(2).getByTestId('test-prompt');
    await prompt.fill('Which command lists a tar archive?');
    await until(async () => (await page.getByTestId('tests-view').getAttribute('data-dirty')) === 'true', 'dirty');

    // Another tab of the skill: asked, and Stay keeps the edit on screen.
    await page.getByTestId('skill-tab-read').click();
    await page.getByTestId('leave-dialog').waitFor();
    assert.match(
      await page.getByTestId('leave-dialog').innerText(),
      new RegExp(`${SKILL}@v1 has tests that are not saved`),
    );
    assert.equal(await page.getByTestId('leave-keep').count(), 0, 'no draft is kept for tests: no "keep draft"');
    await page.getByTestId('leave-stay').click();
    await page.getByTestId('leave-dialog').waitFor({ state: 'detached' });
    assert.ok(page.url().endsWith(`#/skill/${SKILL}/tests`));
    assert.equal(await prompt.inputValue(), 'Which command lists a tar archive?');

    // Back (history) is asked too, and the address stays.
    await page.goBack();
    await page.getByTestId('leave-dialog').waitFor();
    await page.getByTestId('leave-stay').click();
    assert.ok(page.url().endsWith(`#/skill/${SKILL}/tests`));

    // Another page: Save and leave stores the edit, then goes on.
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-save').click();
    await page.getByTestId('skill-table').waitFor();
    const stored = await apiCall<{ tests: Array<{ prompt: string }> }>(host, 'verify.tests', { name: SKILL });
    assert.equal(stored.tests[2]!.prompt, 'Which command lists a tar archive?');

    // Back on the tab: Discard drops an edit and leaves without storing it.
    await page.goto(`${host.origin}/#/skill/${SKILL}/tests`);
    await until(async () => (await rows().count()) === 3, 'the tests show again');
    await rows().nth(2).getByTestId('test-prompt').fill('Dropped edit');
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-discard').click();
    await page.getByTestId('skill-table').waitFor();
    const kept = await apiCall<{ tests: Array<{ prompt: string }> }>(host, 'verify.tests', { name: SKILL });
    assert.equal(kept.tests[2]!.prompt, 'Which command lists a tar archive?');
    assert.deepEqual(problems, []);
  });

  test('a version without tests points to Add test, then says a new row is not saved yet', async () => {
    await page.goto(`${host.url}#/skill/${UNTESTED}/tests`);
    await page.getByTestId('tests-empty').waitFor();
    assert.equal(await page.getByTestId('tests-source').innerText(), 'No tests yet: Add test makes one.');
    await page.getByTestId('tests-add').click();
    await until(async () => (await rows().count()) === 1, 'the new row');
    // Blank and untouched: neutral, not red, until someone types or saves.
    assert.equal(await page.getByTestId('tests-problems').count(), 0);
    assert.equal(await rows().nth(0).getByTestId('test-problems').count(), 0);
    assert.equal(
      await rows()
        .nth(0)
        .evaluate((el) => el.classList.contains('bad')),
      false,
    );
    await rows().nth(0).getByTestId('test-prompt').fill('What lists a tar archive?');
    await until(
      async () => (await page.getByTestId('tests-problems').count()) === 1,
      'typed in: the empty value is named',
    );
    assert.equal(await page.getByTestId('tests-source').innerText(), 'Not saved yet: Save tests stores them with v1.');
    // leave without storing it
    await page.getByTestId('nav-library').click();
    await page.getByTestId('leave-discard').click();
    await page.getByTestId('skill-table').waitFor();
  });
});
