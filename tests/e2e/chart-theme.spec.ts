// Charts follow the theme: the visualizer's charts are drawn in the light theme's
// colours, redrawn in the dark theme's when the sidebar toggle switches, and back again, without a
// reload. Colours are read from the ECharts SVG (fill and stroke attributes of its text and lines).
// Run: node --import tsx --test tests/e2e/chart-theme.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { AdapterWritten } from '../../common/api/adapter-schemas';
import { CHART_FALLBACK } from '../../renderer/src/lib/shared/chart-theme';
import { writeFixturePeft } from '../int/adapters/fixture';
import { apiCall, apiStream, openStudio, ROOT, screenshot, until, type Studio } from './harness';

describe('charts follow the theme', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let page: Page;
  let work: string;
  let merged: string;

  /** Every fill and stroke colour in the chart's SVG, lower-cased. */
  const colours = async (testid: string): Promise<Set<string>> => {
    const svg = page.getByTestId(testid).locator('svg');
    await until(async () => (await svg.locator('text').count()) > 0, `${testid} draws`);
    const html = (await svg.innerHTML()).toLowerCase();
    return new Set([...html.matchAll(/(?:fill|stroke)="(#[0-9a-f]{3,8}|rgba?\([^)]*\))"/g)].map((m) => m[1]!));
  };
  const showsOnly = async (testid: string, theme: 'light' | 'dark') => {
    const other = theme === 'light' ? 'dark' : 'light';
    await until(async () => (await colours(testid)).has(CHART_FALLBACK[theme].muted), `${testid} in ${theme} colours`);
    const seen = await colours(testid);
    for (const c of [CHART_FALLBACK[other].muted, CHART_FALLBACK[other].text])
      assert.ok(!seen.has(c), `${testid} still has the ${other} theme's ${c}: ${[...seen].join(' ')}`);
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'pskills-e2e-chart-theme-'));
    studio = await openStudio();
    page = studio.page;
    const host = studio.host;
    await apiCall(host, 'engine.loadBundle', { dir: join(ROOT, 'tests/fixtures/bundle-tiny') });
    const ids: string[] = [];
    for (const seed of [1, 2]) {
      await writeFixturePeft(join(work, `peft-${seed}`), seed);
      ids.push(
        (await apiCall<AdapterWritten>(host, 'adapters.import', { dir: join(work, `peft-${seed}`) })).adapter.id,
      );
    }
    merged = (await apiStream<AdapterWritten>(host, 'adapters.merge', { ids, method: 'cat', weights: [1, 0.5] }))
      .adapter.id;
  });

  after(async () => {
    await studio?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the visualizer draws in the light theme, then redraws in the dark one on toggle, and back', async () => {
    await page.goto(`${studio!.host.url}#/adapters/${merged}`);
    await page.getByTestId('theme-light').click();
    for (const chart of ['viz-blocks-chart', 'viz-heatmap-chart']) await showsOnly(chart, 'light');
    await page.getByTestId('theme-dark').click();
    assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark');
    for (const chart of ['viz-blocks-chart', 'viz-heatmap-chart']) await showsOnly(chart, 'dark');
    assert.ok(
      (await colours('viz-blocks-chart')).has(CHART_FALLBACK.dark.series[0]!),
      'the first source in the dark blue',
    );
    await screenshot(page, 'chart-theme-dark');
    await page.getByTestId('theme-light').click();
    await showsOnly('viz-blocks-chart', 'light');
    assert.deepEqual(studio!.problems, []);
  });
});
