// A stopped web host reads as a stopped server, not as a bug: the page says the studio server
// stopped, gives the command that brings this address back (`pskills serve --port P`), and Retry
// reconnects once it runs again. With --port the restarted host prints the very same address (its
// token is kept in the data folder), so the open tab signs in again without a new link.
// Run: node --import tsx --test tests/e2e/server-stopped.spec.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  collectProblems,
  ensureRendererBuilt,
  launchChromium,
  screenshot,
  startHost,
  until,
  type Host,
} from './harness';

/** A port nobody listens on now, for the host to take with --port. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('the studio server stops and starts again', { timeout: 300_000 }, () => {
  let host: Host | undefined;
  let browser: Browser | undefined;
  let dataDir: string;
  let port: number;

  before(async () => {
    ensureRendererBuilt();
    dataDir = mkdtempSync(join(tmpdir(), 'pskills-e2e-stopped-'));
    port = await freePort();
    host = await startHost(undefined, { dataDir, port });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await host?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the page names the stopped server and the command; Retry reconnects on the same address', async () => {
    const page = await browser!.newPage({ viewport: { width: 1360, height: 840 } });
    page.setDefaultTimeout(20_000);
    const problems = collectProblems(page);
    const first = host!.url;
    await page.goto(first);
    await page.getByTestId('library-empty').waitFor();
    assert.equal(await page.getByTestId('server-stopped').count(), 0);

    await host!.stop(true);
    // A page that loads from the API (a call), then an import (a stream over the WebSocket).
    await page.getByTestId('nav-trajectories').click();
    const banner = page.getByTestId('server-stopped');
    await banner.waitFor();
    assert.equal(await page.getByTestId('server-stopped-title').innerText(), 'The studio server stopped.');
    assert.equal(await page.getByTestId('server-stopped-command').innerText(), `pskills serve --port ${port}`);
    await page.getByTestId('nav-import').click();
    await page.getByTestId('import-source').fill(join(dataDir, 'nothing-here'));
    await page.getByTestId('import-start').click();
    await until(
      async () => (await page.locator('[data-testid="error"][data-code="unavailable"]').count()) > 0,
      'the import says why',
    );
    const text = await page.locator('body').innerText();
    assert.doesNotMatch(text, /bug report|went wrong inside|internal/i);
    assert.match(text, /The studio server stopped\./);
    await screenshot(page, 'server-stopped-01-banner');
    await page.keyboard.press('Escape');

    // Retry while it is still down: the banner stays.
    await page.getByTestId('server-retry').click();
    await until(async () => (await banner.getAttribute('data-state')) === 'stopped', 'still stopped');

    host = await startHost(undefined, { dataDir, port });
    assert.equal(host.url, first, 'with --port the restarted host prints the same address');
    await page.getByTestId('server-retry').click();
    await until(async () => (await banner.count()) === 0, 'the banner goes once the host answers');
    await page.getByTestId('nav-library').click();
    await page.getByTestId('library-empty').waitFor();
    const unexpected = problems.filter((p) => !/Failed to fetch|ERR_CONNECTION_REFUSED|WebSocket/.test(p));
    assert.deepEqual(unexpected, []);
    await page.close();
  });
});
