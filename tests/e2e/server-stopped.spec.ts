// A stopped web host reads as a stopped server, not as a bug: the page says the studio server
// stopped (on an idle page too, within 3 s: a heartbeat), gives the commands that bring this address
// back (`npm start -- --port P`, `npx pskills serve --port P`; the second is run here as copied), and
// one Retry reconnects once it runs again and loads the page afresh, with no stale error. A host
// restarted with a new token is joined by pasting its address into the tab. With --port the restarted host prints the very same address (its
// token is kept in the data folder), so the open tab signs in again without a new link.
// Run: node --import tsx --test tests/e2e/server-stopped.spec.ts
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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
  ROOT,
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
    assert.deepEqual(await page.getByTestId('server-stopped-command').allInnerTexts(), [
      `npm start -- --port ${port}`,
      `npx pskills serve --port ${port}`,
    ]);
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

  test('an idle page shows the banner within 3 s; the command works as copied; one Retry restores the page', async () => {
    const page = await browser!.newPage({ viewport: { width: 1360, height: 840 } });
    page.setDefaultTimeout(20_000);
    await page.goto(host!.url);
    await page.getByTestId('nav-models').click();
    await until(async () => (await page.getByTestId('models-count').innerText()) === '1 bundle', 'the default bundle');
    await page.waitForTimeout(1500); // idle: nothing clicked from here on

    await host!.stop(true);
    const stoppedAt = Date.now();
    await page.getByTestId('server-stopped').waitFor({ timeout: 3000 });
    const shownMs = Date.now() - stoppedAt;
    console.log(`# banner on an idle page ${shownMs} ms after the host stopped`);
    assert.ok(shownMs <= 3000, `${shownMs} ms`);
    // The page's own load fails meanwhile, with its own error beside the banner.
    await page.getByTestId('models-refresh').click();
    await until(async () => (await page.locator('[data-testid="error"]').count()) > 0, "the page's own error shows");

    // The banner's second command, pasted into a terminal in the studio folder, starts the studio again.
    const command = (await page.getByTestId('server-stopped-command').allInnerTexts())[1]!;
    assert.equal(command, `npx pskills serve --port ${port}`);
    const child = spawn('sh', ['-c', `${command} --data-dir '${dataDir}'`], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no address in 60 s: ${out}`)), 60_000);
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/studio: http:\/\/127\.0\.0\.1:\d+\/#token=/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      // One Retry: the banner goes, and so does every error the page showed; its data is back.
      await page.getByTestId('server-retry').click();
      await until(async () => (await page.getByTestId('server-stopped').count()) === 0, 'the banner goes');
      await page.getByTestId('models-count').waitFor();
      const stale = async () =>
        (await page.locator('[data-testid="error"]').allInnerTexts()).concat(
          await page.locator('[data-testid="error"]').evaluateAll((els) => els.map((e) => e.outerHTML.slice(0, 300))),
        );
      await until(async () => (await stale()).length === 0, 'no stale error stays', 10_000).catch(async (e) => {
        throw new Error(`${(e as Error).message}: ${JSON.stringify(await stale())}`);
      });
      await until(async () => (await page.getByTestId('models-count').innerText()) === '1 bundle', 'the list is back');
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 1000));
    }
    await page.close();
  });

  test('pasting a restarted host’s new address into the tab clears the banner and every stale error', async () => {
    // The --port host of the first test stopped with the page above; this one has another data folder,
    // so another token on the same port.
    const page = await browser!.newPage({ viewport: { width: 1360, height: 840 } });
    page.setDefaultTimeout(20_000);
    host = await startHost(undefined, { dataDir, port });
    await page.goto(host.url);
    await page.getByTestId('nav-trajectories').click();
    await host.stop(true);
    await page.getByTestId('server-stopped').waitFor({ timeout: 3000 });
    await page.getByTestId('nav-models').click();
    await page.getByTestId('models-refresh').click();
    await until(async () => (await page.locator('[data-testid="error"]').count()) > 0, 'the Models page says why');

    const otherData = mkdtempSync(join(tmpdir(), 'pskills-e2e-stopped-other-'));
    host = await startHost(undefined, { dataDir: otherData, port });
    try {
      await page.getByTestId('server-retry').click();
      await until(
        async () => (await page.getByTestId('server-stopped').getAttribute('data-state')) === 'new_token',
        'Retry finds a host with another token',
      );
      assert.notEqual(new URL(host.url).hash, '', 'the new address has its token');
      await page.goto(host.url); // pasted into the address bar: same origin, only the fragment differs
      await until(async () => (await page.getByTestId('server-stopped').count()) === 0, 'the banner goes');
      // The address has no route after its token: the tab opens the Library of the new host.
      await page.getByTestId('library-empty').waitFor();
      await until(async () => (await page.locator('[data-testid="error"]').count()) === 0, 'no stale error stays');
    } finally {
      await host.stop();
      host = undefined;
    }
    await page.close();
  });
});
