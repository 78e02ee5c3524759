// Distilling a skill on the Skill page in Chromium against `pskills serve`, on the real default bundle
// (the tiny fixtures are random: no checker outcome would mean anything there). A SkillWorld world's
// skill is imported through the Import dialog, its practice questions stored as its tests (as a user's
// own tests would be); the page offers Instant / Distilled with a time estimate, lists the practice
// questions with their sources (remove, add), cancels a long run with nothing stored, then distils with
// a live loss chart and step counter. The compare page then shows a Distilled column, scored with the
// skill's SkillWorld checker on the world's eval tasks (disjoint from the practice questions) against
// None; the Adapters page shows the adapter's kind and lineage; a bundle without the train-step graph
// offers Instant only.
// Run: node --import tsx --test tests/e2e/distill.spec.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { check, type CheckerSpec } from '../../common/skillworld/check';
import { apiCall, openStudio, ROOT, screenshot, until, type Host, type Studio } from './harness';

const WORLD = join(ROOT, 'tests/fixtures/skillworld/distill');
const SKILL = 'brotro-mixtus';
const STEPS = 40;

interface Task {
  task_id: string;
  skill: string;
  messages: { role: string; content: string }[];
  checker: CheckerSpec;
}
const rows = (file: string) =>
  readFileSync(join(WORLD, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Task);
const TASKS = rows('tasks.jsonl');
const PRACTICE = rows('practice.jsonl');

/** Records, from inside the page, the distill panel's statuses and every step line it showed. */
function watchDistill(page: Page): Promise<void> {
  return page.evaluate(`(() => {
    const panel = document.querySelector('[data-testid="distill-panel"]');
    const w = { statuses: [panel.dataset.status], steps: [] };
    window.__distill = w;
    const obs = new MutationObserver(() => {
      const status = panel.dataset.status;
      if (w.statuses[w.statuses.length - 1] !== status) w.statuses.push(status);
      const step = panel.querySelector('[data-testid="distill-step"]');
      const text = step ? step.textContent.trim() : '';
      if (text && w.steps[w.steps.length - 1] !== text) w.steps.push(text);
      if (status !== 'running' && w.statuses.includes('running')) obs.disconnect();
    });
    obs.observe(panel, { attributes: true, childList: true, subtree: true, characterData: true });
  })()`);
}

describe('distil a skill in the browser', { timeout: 900_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let adapterId = '';

  const column = (condition: string) => page.locator(`[data-testid="compare-column"][data-condition="${condition}"]`);

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
  });

  after(async () => {
    await studio?.close();
  });

  test('imports the SkillWorld skill through the Import dialog; its practice questions become its tests', async () => {
    await page.goto(host.url);
    await page.getByTestId('nav-import').click();
    await page.getByTestId('import-dialog').waitFor();
    await page.getByTestId('import-source').fill(WORLD);
    await page.getByTestId('import-start').click();
    await page.getByTestId('import-result').waitFor({ timeout: 60_000 });
    assert.equal(await page.getByTestId('import-imported').innerText(), '1');
    await page.getByTestId('import-close').click();
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).waitFor();
    assert.equal(PRACTICE.length, 32);
    await apiCall(host, 'verify.setTests', {
      name: SKILL,
      tests: PRACTICE.map((p) => ({ id: p.task_id, prompt: p.messages[0]!.content, expect: p.checker })),
    });
  });

  test('the page offers Instant and Distilled with an estimate, and lists the practice questions by source', async () => {
    await page.locator(`[data-testid="skill-row"][data-skill-name="${SKILL}"]`).click();
    await page.getByTestId('skill-tab-compare').click();
    await page.getByTestId('skill-lab').waitFor();
    assert.equal(await page.getByTestId('compile-mode').getAttribute('data-mode'), 'instant');
    assert.equal(await page.getByTestId('compile-panel').count(), 1);
    await page.getByTestId('mode-distilled').check();
    // The plan loads the default bundle and times a step of its train-step graph.
    await page.getByTestId('distill-estimate').waitFor({ timeout: 120_000 });
    assert.match(await page.getByTestId('distill-estimate').innerText(), /^about [\d.]+ (s|min) \(estimate\)$/);
    assert.match(
      (await page.getByTestId('distill-estimate').getAttribute('title')) ?? '',
      /^An estimate: 40 steps × [\d.]+ s per step, measured on this machine for the \d+×\d+ bucket/,
    );
    assert.equal(await page.getByTestId('distill-unavailable').count(), 0);
    await page.getByTestId('distill-panel').waitFor();

    const sources = () =>
      page.getByTestId('practice-question').evaluateAll((els) => els.map((e) => e.getAttribute('data-source')));
    // The recipe's 40 questions (docs/distill.md "Practice"): the person's own take three quarters, 30,
    // the 24 practised tests (8 of 32 held out) and the Examples' pair with its 7 copies interleaved, so
    // 8 Examples and 22 tests (a test's redrawn copies come after every test: none fit); the made ones
    // fill 10, round-robin over requests and cloze (self-written requests join at the run): this skill's
    // sections give 4 cloze, requests the other 6.
    const before = await sources();
    const count = (list: (string | null)[], source: string) => list.filter((s) => s === source).length;
    assert.equal(before.length, 40, "the recipe's questions");
    assert.equal(count(before, 'tests'), 22, 'the practised tests that fit the owned three quarters');
    assert.equal(count(before, 'examples'), 8, 'the Examples pair and its 7 copies with new numbers');
    assert.deepEqual(
      ['requests', 'cloze', 'template'].map((s) => count(before, s)),
      [6, 4, 0],
      'the made ones, round-robin',
    );
    const sourcesLine = await page.getByTestId('practice-sources').innerText();
    assert.match(sourcesLine, /8 of 32 tests are held out/);
    assert.doesNotMatch(sourcesLine, /[a-z)]\.[A-Z]/, 'sentences run together');
    // Remove a cloze, add one of the user's own.
    const cloze = page.locator('[data-testid="practice-question"][data-source="cloze"]').last();
    const removed = await cloze.locator('.text').innerText();
    await cloze.getByTestId('practice-remove').click();
    await page.getByTestId('practice-input').fill('Log this mixtus item: permit 5121.');
    await page.getByTestId('practice-add').click();
    const afterEdit = await sources();
    assert.equal(afterEdit.length, before.length);
    assert.equal(afterEdit.at(-1), 'user');
    assert.ok(!(await page.getByTestId('practice-panel').innerText()).includes(removed), 'the removed one is gone');
    assert.match(
      await page.getByTestId('practice-counts').innerText(),
      /^40 · test 22, Examples 8, synthesized 6, cloze 3, added 1$/,
    );
    await screenshot(page, 'distill-01-plan');
  });

  test('Cancel stops a long distillation within a step; nothing is stored', async () => {
    await page.getByTestId('distill-steps').fill('400');
    await page.getByTestId('distill-start').click();
    await until(
      async () =>
        /^step [1-9]\d* of 400$/.test(
          (await page
            .getByTestId('distill-step')
            .innerText()
            .catch(() => '')) ?? '',
        ),
      'the training steps start',
      180_000,
    );
    await page.getByTestId('distill-cancel').click();
    await until(
      async () => (await page.getByTestId('distill-panel').getAttribute('data-status')) !== 'running',
      'the distillation stops',
      60_000,
    );
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-status'), 'cancelled');
    const [, at] = /^step (\d+) of 400$/.exec(await page.getByTestId('distill-step').innerText())!;
    assert.ok(Number(at) < 400, `cancelled at step ${at}`);
    assert.match(await page.getByTestId('distill-progress').innerText(), /Cancelled: nothing was stored/);
    const adapters = await apiCall<{ recipe: { kind: string } }[]>(host, 'adapters.list', {});
    assert.ok(!adapters.some((a) => a.recipe.kind === 'distill'), 'a cancelled distillation stores no adapter');
  });

  test('Distil shows the teacher pass, then a live loss chart and step counter, then the adapter', async () => {
    await page.getByTestId('distill-steps').fill(String(STEPS));
    await watchDistill(page);
    await page.getByTestId('distill-start').click();
    await until(
      async () => (await page.getByTestId('distill-panel').getAttribute('data-status')) !== 'running',
      'the distillation ends',
      600_000,
    );
    const w = (await page.evaluate('window.__distill')) as { statuses: string[]; steps: string[] };
    assert.deepEqual(w.statuses.slice(-2), ['running', 'done']);
    const steps = w.steps.map((s) => /^step (\d+) of (\d+)$/.exec(s)).filter((m) => m !== null);
    assert.ok(steps.length > 3, `the step counter moved: ${w.steps.slice(0, 5).join(' / ')}`);
    assert.ok(steps.every((m) => m[2] === String(STEPS)));
    assert.equal(steps.at(-1)![1], String(STEPS));
    // Done, the panel folds to one line (the compare columns stay near the top); Show details opens it.
    assert.match(await page.getByTestId('distill-summary').innerText(), new RegExp(`Done: ${STEPS} steps, final loss`));
    await page.getByTestId('distill-expand').click();
    assert.equal(await page.getByTestId('distill-collapse').getAttribute('aria-expanded'), 'true');
    // The chart draws once its panel is open again: wait for it rather than race it.
    await page.locator('[data-testid="distill-chart"][data-ready="true"]').waitFor({ timeout: 10_000 });
    assert.ok((await page.getByTestId('distill-chart').locator('path').count()) > 0, 'the loss line is drawn');
    await page.getByTestId('distill-result').waitFor();
    adapterId = await page.getByTestId('distill-adapter').innerText();
    assert.match(adapterId, /^[0-9a-f]{12}$/);
    const [, n, finalLoss] = /^(\d+) · ([\d.]+)$/.exec(await page.getByTestId('distill-final-loss').innerText())!;
    assert.equal(n, String(STEPS));
    console.log(
      `# distilled ${adapterId}: final loss ${finalLoss}, ${await page.getByTestId('distill-seconds').innerText()}`,
    );
    await screenshot(page, 'distill-02-done');
  });

  test('compare shows a Distilled column that passes the checker where None fails', async () => {
    await until(async () => (await column('distilled').count()) === 1, 'the Distilled column shows');
    assert.deepEqual(
      await page.getByTestId('compare-column').evaluateAll((els) => els.map((e) => e.getAttribute('data-condition'))),
      ['none', 'in_context', 'instant', 'distilled', 'wrong_skill'],
    );
    const outcomes: {
      task: string;
      none: boolean;
      in_context: boolean;
      instant: boolean;
      distilled: boolean;
      text: string;
    }[] = [];
    for (const task of TASKS) {
      await page.getByTestId('compare-prompt').fill(task.messages[0]!.content);
      await page.getByTestId('compare-run').click();
      await until(
        async () =>
          !['running', 'idle'].includes((await page.getByTestId('compare-panel').getAttribute('data-status'))!),
        'the comparison ends',
        180_000,
      );
      assert.equal(await page.getByTestId('compare-panel').getAttribute('data-status'), 'done');
      assert.equal(await column('distilled').getByTestId('column-adapter').innerText(), adapterId);
      const text = (c: string) => column(c).getByTestId('column-output').innerText();
      const distilled = await text('distilled');
      outcomes.push({
        task: task.task_id,
        none: check(task.checker, await text('none')),
        in_context: check(task.checker, await text('in_context')),
        instant: check(task.checker, await text('instant')),
        distilled: check(task.checker, distilled),
        text: distilled,
      });
    }
    console.log(`# checker outcomes: ${JSON.stringify(outcomes)}`);
    assert.ok(
      outcomes.some((o) => !o.none && o.distilled),
      `a task where None fails and Distilled passes: ${JSON.stringify(outcomes)}`,
    );
    await screenshot(page, 'distill-03-compare');
  });

  test('a test prompt in compare says whether the distilled adapter practised on it or it was held out', async () => {
    const plan = await apiCall<{
      distilled: { recipe: { practice: { practisedTests: string[]; heldOutTests: string[] } } };
    }>(host, 'adapters.distillPlan', { name: SKILL });
    const { practisedTests, heldOutTests } = plan.distilled.recipe.practice;
    for (const [id, word] of [
      [practisedTests[0]!, 'practised'],
      [heldOutTests[0]!, 'held out'],
    ] as const) {
      await page.getByTestId('compare-prompt').fill(PRACTICE.find((p) => p.task_id === id)!.messages[0]!.content);
      await page.getByTestId('compare-run').click();
      await until(
        async () => (await page.getByTestId('compare-panel').getAttribute('data-status')) === 'done',
        'the comparison ends',
        180_000,
      );
      assert.equal(await column('distilled').getByTestId('column-practised').innerText(), word);
      assert.equal(await column('in_context').getByTestId('column-practised').count(), 0, 'only Distilled is marked');
    }
  });

  test('the Adapters page shows the kind and the lineage', async () => {
    await page.goto(`${host.origin}/#/adapters/${adapterId}`);
    const row = page.locator(`[data-testid="adapter-row"][data-adapter-id="${adapterId}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute('data-kind'), 'distill');
    assert.equal(await row.getByTestId('adapter-kind').innerText(), 'distilled');
    assert.match(
      await page.getByTestId('lineage-summary').innerText(),
      /distilled from the instant adapter · 40 steps/,
    );
    assert.match(
      await page.getByTestId('lineage-practice').innerText(),
      // The panel's list, then the self-written requests the run added (docs/distill.md "Practice").
      /^tests 22 · examples 8 · requests 6 · cloze 3 · user 1( · self_written \d+)?$/,
    );
    assert.match(await page.getByTestId('lineage-steps').innerText(), /^40 /);
    assert.match(await page.getByTestId('lineage-final-loss').innerText(), /^[\d.]+$/);
    assert.match(await page.getByTestId('lineage-seconds').innerText(), /^[\d.]+$/);
    const parent = page.getByTestId('lineage-parent');
    assert.equal(await parent.count(), 1);
    assert.match(await parent.innerText(), /init adapter\s+instant · brotro-mixtus@1/);
    await screenshot(page, 'distill-04-lineage');
  });

  test('on a bundle without a train-step graph the page says so and offers Instant only', async () => {
    await apiCall(host, 'engine.loadBundle', { dir: join(ROOT, 'tests/fixtures/bundle-hyper') });
    await page.goto(`${host.origin}/#/skill/${SKILL}/compare`);
    await page.getByTestId('distill-unavailable').waitFor();
    assert.match(
      await page.getByTestId('distill-unavailable').innerText(),
      /tiny-random-hyper has no train-step graph, so it can compile Instant only/,
    );
    assert.ok(await page.getByTestId('mode-distilled').isDisabled());
    assert.equal(await page.getByTestId('compile-mode').getAttribute('data-mode'), 'instant');
    assert.equal(await page.getByTestId('compile-panel').count(), 1);
    assert.equal(await page.getByTestId('distill-panel').count(), 0);
    // The distilled adapter belongs to the default bundle: no Distilled column on this one.
    await until(async () => (await column('distilled').count()) === 0, 'the Distilled column goes');
    await screenshot(page, 'distill-05-instant-only');
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
