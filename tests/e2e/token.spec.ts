// The launch token never leaves the studio's origin (docs/security.md "The launch token"). Cookies
// for 127.0.0.1 go to every port on it, so a token cookie would reach any other local server a page in
// the same browser visits. Here a second server on another port records every request it gets; the
// studio is opened from its printed address and used (a call and a stream), then the same browser
// visits the second server, which must receive no token and no cookie. No response of the studio
// sets a cookie, the token leaves the address bar, and it lives in sessionStorage only.
// Run: node --import tsx --test tests/e2e/token.spec.ts
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStudio, until, type Studio } from './harness';

const SKILL =
  '---\nname: tidy-notes\ndescription: Tidy meeting notes into decisions and actions.\n---\n\n# Tidy notes\n\n' +
  'Read the notes, list every decision with its owner, then every action with a date.\n';

describe('the launch token in the browser', { timeout: 300_000 }, () => {
  let studio: Studio | undefined;
  let other: Server;
  let otherOrigin: string;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const setCookies: string[] = [];

  before(async () => {
    studio = await openStudio((dataDir) => {
      mkdirSync(join(dataDir, 'src', 'tidy-notes'), { recursive: true });
      writeFileSync(join(dataDir, 'src', 'tidy-notes', 'SKILL.md'), SKILL);
    });
    other = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>other</title><img src="/pixel.png"><script src="/x.js"></script>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  after(async () => {
    await studio?.close();
    await new Promise((r) => other?.close(r));
  });

  test('the studio works from its address; another local port then receives no token', async () => {
    const { host, page } = studio!;
    const token = new URLSearchParams(new URL(host.url).hash.slice(1)).get('token')!;
    page.on('response', async (res) => {
      if (!res.url().startsWith(host.origin)) return;
      const cookie = await res.headerValue('set-cookie');
      if (cookie !== null) setCookies.push(`${res.url()}: ${cookie}`);
    });

    await page.goto(host.url);
    await page.getByTestId('library-empty').waitFor(); // an API call with the token
    await until(async () => !page.url().includes('token'), 'the token leaves the address bar');
    assert.equal(await page.evaluate("sessionStorage.getItem('pskills.token')"), token);
    // A stream over the WebSocket, the token as its subprotocol: an import of a one-skill folder.
    await page.getByTestId('nav-import').click();
    await page.getByTestId('import-source').fill(join(host.dataDir, 'src'));
    await page.getByTestId('import-start').click();
    await page.getByTestId('import-result').waitFor();
    assert.equal(await page.getByTestId('import-imported').innerText(), '1');
    assert.deepEqual(await page.context().cookies(), []);

    await page.goto(`${otherOrigin}/`);
    await until(async () => seen.length >= 2, 'the other server is visited');
    for (const r of seen) {
      assert.equal(r.headers.cookie, undefined, `${r.url} got a cookie`);
      assert.ok(!JSON.stringify(r).includes(token), `${r.url} received the token: ${JSON.stringify(r)}`);
    }
    assert.deepEqual(setCookies, [], 'no response of the studio sets a cookie');
  });

  test('a fresh tab without the token gets the page but not the API', async () => {
    const context = await studio!.browser.newContext();
    try {
      const page = await context.newPage();
      const res = await page.goto(studio!.host.origin + '/');
      assert.equal(res?.status(), 200);
      const call = await context.request.post(studio!.host.origin + '/api/call/app.info', { data: {} });
      assert.equal(call.status(), 401);
      // The printed address with a route after the token opens that route in a new tab, the token dropped.
      const tab = await context.newPage();
      await tab.goto(`${studio!.host.url}#/library`);
      await tab.getByTestId('library-count').waitFor();
      await until(async () => new URL(tab.url()).hash === '#/library', 'the route stays, the token goes');
    } finally {
      await context.close();
    }
  });
});
