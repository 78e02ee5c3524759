// The Trajectories page in Chromium against `pskills serve`: trajectories stored through the API are
// listed newest first; the skill and rating filters narrow the list; a row opens its messages; Up with a
// note rates it (the row follows); Export writes what the filters select as JSONL to the named file.
// Run: node --import tsx --test tests/e2e/trajectories.spec.ts
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Trajectory } from '../../common/api/trajectory-schemas';
import { apiCall, openStudio, screenshot, until, type Host, type Studio } from './harness';

const SKILL = `---
name: tar-archives
description: Create and unpack tar archives.
---

# Tar archives

1. To unpack, run \`tar -xzf out.tar.gz\`.
`;

describe('trajectories page', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let host: Host;
  let page: Page;
  let problems: string[];
  let added: Trajectory[];

  const rows = () => page.getByTestId('trajectory-row');

  before(async () => {
    studio = await openStudio();
    ({ host, page, problems } = studio);
    await apiCall(host, 'skills.save', { name: 'tar-archives', content: SKILL });
    added = [];
    const add = async (input: object) => added.push(await apiCall<Trajectory>(host, 'trajectories.add', input));
    await add({
      source: 'playground',
      messages: [
        { role: 'user', content: 'Say hello.' },
        { role: 'assistant', content: 'Hello.' },
      ],
    });
    await add({
      source: 'compare',
      skill: { name: 'tar-archives' },
      condition: 'in_context',
      messages: [
        { role: 'user', content: 'How do I unpack a .tar.gz file?' },
        { role: 'assistant', content: 'Run tar -xzf out.tar.gz in the folder.' },
      ],
    });
    await add({
      source: 'eval',
      skill: { name: 'tar-archives' },
      condition: 'instant',
      messages: [
        { role: 'user', content: 'Which command lists an archive?' },
        { role: 'assistant', content: 'tar -tzf out.tar.gz' },
      ],
      verdict: { passed: true, test: 'regex-command' },
    });
    await page.goto(host.url);
  });

  after(async () => {
    await studio?.close();
  });

  test('lists every trajectory, newest first, from the sidebar link', async () => {
    await page.getByTestId('nav-trajectories').click();
    await until(async () => (await rows().count()) === 3, 'three rows');
    const ids = await rows().evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
    assert.deepEqual(ids, [added[2]!.id, added[1]!.id, added[0]!.id]);
    assert.equal(await page.getByTestId('trajectories-count').innerText(), '3 of 3');
    // the condition is named under the source, in Compare's words; the row without one has none
    assert.deepEqual(
      (await page.getByTestId('trajectory-row-source').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
      ['eval instant', 'compare in context', 'playground'],
    );
    await screenshot(page, 'trajectories-01-list');
  });

  test('filters by skill; a row opens its messages', async () => {
    await page.getByTestId('trajectories-skill').fill('tar-archives');
    await page.getByTestId('trajectories-skill').press('Enter');
    await until(async () => (await rows().count()) === 2, 'two rows of tar-archives');
    await rows().nth(1).click(); // the compare trajectory
    const detail = page.getByTestId('trajectory-detail');
    await until(async () => (await detail.getAttribute('data-id')) === added[1]!.id, 'the detail');
    const roles = await page.getByTestId('trajectory-message').evaluateAll((els) => els.map((e) => e.dataset.role));
    assert.deepEqual(roles, ['user', 'assistant']);
    assert.match(await detail.innerText(), /compare · in context · tar-archives@1/);
    assert.match(page.url(), new RegExp(`#/trajectories/${added[1]!.id}$`));
  });

  test('Up with a note rates the open trajectory; the row and the rating filter follow', async () => {
    await page.getByTestId('trajectory-note').fill('clear and right');
    await page.getByTestId('trajectory-rate-up').click();
    await until(async () => (await page.getByTestId('trajectory-rating').count()) === 1, 'the rating line');
    assert.match(await page.getByTestId('trajectory-rating').innerText(), /^Rated up: “clear and right”/);
    const row = page.locator(`[data-testid="trajectory-row"][data-id="${added[1]!.id}"]`);
    assert.equal(await row.getByTestId('trajectory-row-rating').innerText(), 'up');
    const stored = await apiCall<Trajectory>(host, 'trajectories.show', { id: added[1]!.id });
    assert.deepEqual([stored.rating?.value, stored.rating?.note], ['up', 'clear and right']);
    await screenshot(page, 'trajectories-02-rated');

    await page.getByTestId('trajectories-rating').selectOption('up');
    await until(async () => (await rows().count()) === 1, 'one rated-up row');
  });

  test('Export writes what the filters select as JSONL to the file named', async () => {
    const file = join(host.dataDir, 'rated-up.jsonl');
    await page.getByTestId('trajectories-export-file').fill(file);
    await page.getByTestId('trajectories-export').click();
    await until(async () => (await page.getByTestId('trajectories-exported').count()) === 1, 'the export note');
    assert.match(await page.getByTestId('trajectories-exported').innerText(), /^1 written to /);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!) as { id: string; skill: string; rating: { value: string; note: string } };
    assert.deepEqual(
      [line.id, line.skill, line.rating.value, line.rating.note],
      [added[1]!.id, 'tar-archives', 'up', 'clear and right'],
    );
    await screenshot(page, 'trajectories-03-export');
    assert.deepEqual(problems, []);
  });
});
