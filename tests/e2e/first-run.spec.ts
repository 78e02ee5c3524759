// The first-run path (docs/guide.md, "Try an example"), in Chromium against `pskills serve` on a fresh
// data folder and the real default bundle: the empty Library offers "Try an example"; one click
// imports the SkillWorld example skills with their tests and opens one on the compare page with a
// held-out prompt; "Run the example" distils it and compares. Every column says what it is, and the
// prompt's checker marks each answer: No skill fails, In context and Distilled pass. Two clicks from
// the first screen; the target is three at most, and when the run ends the five verdicts are in view at
// 1400 × 900 without scrolling (the page brings them there), the columns hold focus, a live region reads
// them out, and the distillation panel is one line. Before that, a run is cancelled twice, before its
// distillation starts and in it: the guide says what the run is doing and offers Cancel from the first
// moment, and a cancel stores nothing. A reload keeps the guide; running the example again uses the
// stored distilled adapter and says so.
// Run: node --import tsx --test tests/e2e/first-run.spec.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

const SKILL = 'brotro-mixtus';
const HINTS: Record<string, string> = {
  none: 'the base model alone',
  in_context: 'skill in the prompt',
  instant: 'skill in the weights, one pass',
  distilled: 'skill in the weights, distilled',
};

describe('first run: Try an example', { timeout: 900_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let clicks = 0;
  const click = async (testid: string) => {
    clicks += 1;
    await page.getByTestId(testid).click();
  };
  const column = (condition: string) => page.locator(`[data-testid="compare-column"][data-condition="${condition}"]`);

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  after(async () => {
    await studio?.close();
  });

  test('a fresh data folder opens on a Library that offers Try an example', async () => {
    await page.goto(host.url);
    await page.getByTestId('first-run').waitFor();
    assert.match(await page.getByTestId('first-run').innerText(), /Try an example/);
    await screenshot(page, 'first-run-01-library');
  });

  test('one click imports the example skills with their tests and opens the compare page', async () => {
    await click('library-try-example');
    await page.getByTestId('example-guide').waitFor({ timeout: 60_000 });
    assert.equal(await page.getByTestId('example-guide').getAttribute('data-skill'), SKILL);
    assert.match(page.url(), new RegExp(`#/skill/${SKILL}/compare$`));
    assert.match(await page.getByTestId('example-guide').innerText(), /VESSOR:/);
    assert.match(await page.getByTestId('example-guide').innerText(), /Other examples: brikmux-pexsur, glistam-puxgu/);
    // A held-out prompt with a checker, never one of the practice questions (the tests).
    const prompt = await page.getByTestId('compare-prompt').inputValue();
    assert.ok(prompt.length > 0, 'the prompt is filled in');
    const tests = await apiCall<{ tests: { prompt?: string }[] }>(host, 'verify.tests', { name: SKILL });
    assert.equal(tests.tests.length, 32, 'the practice questions are the tests');
    assert.ok(!tests.tests.some((t) => t.prompt === prompt), 'the compare prompt is held out');
    assert.match(await page.getByTestId('compare-check-state').innerText(), /checker marks each answer/);
    const skills = await apiCall<{ name: string }[]>(host, 'skills.list', {});
    assert.deepEqual(skills.map((s) => s.name).sort(), ['brikmux-pexsur', 'brotro-mixtus', 'glistam-puxgu']);
    // The note on what the default model can and cannot do, and how to bring a real checkpoint.
    const note = await page.getByTestId('default-model-note').innerText();
    assert.match(note, /5 M parameters/);
    assert.match(note, /--from-hf/);
    assert.match(note, /--from-gguf/);
    assert.match(note, /docs\/guide\.md/);
  });

  test('Run the example says what it does and offers Cancel from the first moment; Cancel stores nothing', async () => {
    const step = () => page.getByTestId('example-step');
    const distilled = async () =>
      (await apiCall<{ recipe: { kind: string } }[]>(host, 'adapters.list', {})).filter(
        (a) => a.recipe.kind === 'distill',
      ).length;
    const cancelled = async (timeout: number) => {
      await page.getByTestId('example-cancel').click();
      await until(
        async () => (await step().innerText()) === 'Cancelled: nothing was trained or stored.',
        'the guide says the run was cancelled and nothing was stored',
        timeout,
      );
      assert.equal(await page.getByTestId('example-cancel').count(), 0);
      assert.equal(await distilled(), 0, 'no distilled adapter was stored');
      await until(async () => page.getByTestId('example-run').isEnabled(), 'Run the example is offered again');
    };
    // Before any distillation progress exists (the model loads and one step is timed), the guide already
    // says so and offers Cancel.
    await page.getByTestId('example-run').click();
    await page.getByTestId('example-cancel').waitFor({ timeout: 1000 });
    assert.equal(await step().getAttribute('data-phase'), 'prepare');
    assert.equal(await step().innerText(), 'Loading the model and timing one training step…');
    assert.equal(await page.getByRole('progressbar', { name: 'Example progress' }).count(), 1);
    await cancelled(5000);
    // In the distillation: the teacher pass, then each step; Cancel stops it between steps.
    await page.getByTestId('example-run').click();
    await until(async () => (await step().getAttribute('data-phase')) === 'distil', 'the distillation starts', 120_000);
    assert.match(await step().innerText(), /^(Teacher pass: |Distilling: step \d+ of \d+)/);
    await cancelled(60_000);
    assert.notEqual(await page.getByTestId('compare-panel').getAttribute('data-status'), 'done', 'nothing compared');
  });

  test('Run the example distils, compares, and the checker marks each column', async () => {
    await click('example-run');
    await until(
      async () => (await page.getByTestId('compare-panel').getAttribute('data-status')) === 'done',
      'the example distils and compares',
      600_000,
    );
    assert.deepEqual(
      await page.getByTestId('compare-column').evaluateAll((els) => els.map((e) => e.getAttribute('data-condition'))),
      ['none', 'in_context', 'instant', 'distilled', 'wrong_skill'],
    );
    for (const [condition, hint] of Object.entries(HINTS))
      assert.equal(await column(condition).locator('.hint').innerText(), hint, condition);
    const passed = async (c: string) =>
      (await column(c).getByTestId('column-verdict').getAttribute('data-passed')) === 'true';
    const texts: Record<string, string> = {};
    for (const c of Object.keys(HINTS)) texts[c] = await column(c).getByTestId('column-output').innerText();
    console.log(`# example answers: ${JSON.stringify(texts)}`);
    assert.equal(await passed('none'), false, 'No skill fails');
    assert.equal(await passed('in_context'), true, 'In context passes');
    assert.equal(await passed('distilled'), true, 'Distilled passes');
    assert.match(await column('distilled').getByTestId('column-verdict').innerText(), /✓/);
    assert.match(await column('none').getByTestId('column-verdict').innerText(), /✗/);
    // The checker's words: passes / fails, and the rule as "expects: …", never "answer matches".
    assert.match(await column('none').getByTestId('column-verdict').innerText(), /fails\s+expects: the answer /);
    assert.match(await column('in_context').getByTestId('column-verdict').innerText(), /passes\s+expects: the answer /);
    // Terms of art carry one line of help.
    for (const term of ['bundle', 'distilled', 'hypernetwork'])
      assert.ok((await page.getByTestId(`help-${term}`).count()) > 0, term);
    assert.ok(clicks <= 3, `${clicks} clicks from the first screen`);
    // The verdict in view: every verdict inside the 1400 × 900 window as the run ends, no scrolling by hand.
    const verdicts = page.getByTestId('column-verdict');
    assert.equal(await verdicts.count(), 5);
    for (const box of await verdicts.evaluateAll((els) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
      }),
    )) {
      assert.ok(box.top >= 0 && box.bottom <= 900 && box.left >= 0 && box.right <= 1400, JSON.stringify(box));
    }
    assert.equal(await page.evaluate("document.activeElement?.getAttribute('data-testid')"), 'compare-columns');
    const announced = await page.getByTestId('compare-announce').innerText();
    assert.equal(await page.getByTestId('compare-announce').getAttribute('aria-live'), 'polite');
    assert.match(announced, /No skill fails, In context passes, Instant (passes|fails), Distilled passes, Wrong skill/);
    // The comparison's kept trajectories carry the verdicts shown (the Trajectories page's Verdict).
    assert.equal((await apiCall<{ storeTrajectories: boolean }>(host, 'settings.get', {})).storeTrajectories, true);
    const kept = await apiCall<{ items: { condition: string; verdict: { passed: boolean } | null }[] }>(
      host,
      'trajectories.list',
      { source: 'compare' },
    );
    assert.equal(kept.items.length, 5);
    for (const t of kept.items) assert.notEqual(t.verdict, null, `${t.condition} has a verdict`);
    assert.equal(kept.items.find((t) => t.condition === 'none')!.verdict!.passed, false);
    assert.equal(kept.items.find((t) => t.condition === 'in_context')!.verdict!.passed, true);
    // The training panel is one line now, and opens again.
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-folded'), 'true');
    assert.match(await page.getByTestId('distill-summary').innerText(), /Done: \d+ steps, final loss [\d.]+/);
    assert.ok((await page.getByTestId('distill-summary').boundingBox())!.height < 40, 'one line');
    console.log(`# clicks from the first screen to a checked comparison: ${clicks}`);
    await screenshot(page, 'first-run-02-compare');
  });

  test('the guide survives a reload: the example is kept in the window', async () => {
    await page.reload();
    await page.getByTestId('example-guide').waitFor({ timeout: 60_000 });
    assert.equal(await page.getByTestId('example-guide').getAttribute('data-skill'), SKILL);
    assert.match(await page.getByTestId('example-guide').innerText(), /VESSOR:/);
    await until(async () => page.getByTestId('example-run').isEnabled(), 'Run the example is offered again');
  });

  test('running the example again uses the stored distilled adapter and says so; Distil again is apart', async () => {
    const distilled = async () =>
      (await apiCall<{ recipe: { kind: string } }[]>(host, 'adapters.list', {})).filter(
        (a) => a.recipe.kind === 'distill',
      ).length;
    assert.equal(await distilled(), 1);
    await until(async () => (await page.getByTestId('example-distil-again').count()) === 1, 'Distil again is offered');
    await page.getByTestId('example-run').click();
    await until(
      async () => (await page.getByTestId('compare-panel').getAttribute('data-status')) === 'done',
      'the example compares again',
      300_000,
    );
    assert.match(await page.getByTestId('example-step').innerText(), /Used the stored distilled adapter [0-9a-f]{12}/);
    assert.match(await page.getByTestId('compare-distilled-note').innerText(), /the stored adapter [0-9a-f]{12}/);
    assert.equal(await distilled(), 1, 'no new adapter was trained');
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-folded'), 'true');
    await page.getByTestId('distill-expand').click();
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-folded'), null);
    await page.getByTestId('distill-collapse').click();
    assert.equal(await page.getByTestId('distill-panel').getAttribute('data-folded'), 'true');
  });

  test('trying the example again keeps the skills and their tests as they are', async () => {
    await apiCall(host, 'verify.setTests', {
      name: SKILL,
      tests: [{ id: 'mine', prompt: 'Log badge 1.', expect: { kind: 'contains', value: 'VESSOR' } }],
    });
    const again = await apiCall<{ imported: number; skills: { name: string; tests: number }[] }>(
      host,
      'import.example',
      {},
    );
    assert.equal(again.imported, 0);
    assert.equal(again.skills.find((s) => s.name === SKILL)!.tests, 1, "the user's own tests are kept");
  });

  test('no console errors, page errors or failed requests', () => {
    assert.deepEqual(problems, []);
  });
});
