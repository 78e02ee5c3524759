// The web host's door: token, origin and host checks, body limits, static files.
import { request } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startWebHost, type WebHost } from '../../../main/api/transports/web-host';
import { direct, studioSuite } from './transports';

// A host serving a static folder in the data folder, beside a file it must never serve.
const s = studioSuite<{ host: WebHost }>(
  {
    name: 'web host with a static folder',
    open: async (studio, dataDir) => {
      const staticDir = join(dataDir, 'static');
      mkdirSync(staticDir);
      writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>studio</title>');
      writeFileSync(join(dataDir, 'secret.txt'), 'outside the static folder');
      const host = await startWebHost({ dispatcher: studio.dispatcher, staticDir });
      return { ...(await direct.open(studio, dataDir)), host, close: () => host.close() };
    },
  },
  'pskills-web-',
);

const call = (headers: Record<string, string>, body = '{}') =>
  fetch(`${s.host.origin}/api/call/app.info`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

describe('web host', () => {
  it('binds 127.0.0.1 and prints the token in the URL fragment, never sent to a server', () => {
    expect(s.host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=.+/);
    expect(new URL(s.host.url).search).toBe('');
  });

  it('401 on the API without a token, with a wrong one, or with the token only as a cookie', async () => {
    expect((await call({})).status).toBe(401);
    expect((await call({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await call({ cookie: `pskills_token=${encodeURIComponent(s.host.token)}` })).status).toBe(401);
  });

  it('static files need no token, and no response sets a cookie', async () => {
    const page = await fetch(s.host.url, { redirect: 'manual' }); // fetch drops the fragment, as browsers do
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBeNull();
    for (const res of [
      await call({ authorization: `Bearer ${s.host.token}` }),
      await call({}),
      await fetch(`${s.host.origin}/?token=${s.host.token}`, { redirect: 'manual' }),
      await fetch(`${s.host.origin}/v1/models`, { headers: { authorization: `Bearer ${s.host.token}` } }),
    ])
      expect(res.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<title>studio</title>');
  });

  it('refuses other origins and hosts even with the token', async () => {
    const auth = { authorization: `Bearer ${s.host.token}` };
    expect((await call(auth)).status).toBe(200);
    expect((await call({ ...auth, origin: 'http://evil.example' })).status).toBe(403);
    // fetch rewrites Host, so a raw request plays the DNS-rebinding page.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${s.host.origin}/api/call/app.info`,
        { method: 'POST', headers: { ...auth, host: 'evil.example:80' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });

  it('refuses a WebSocket without the token or from another origin', async () => {
    const attempt = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${s.host.origin.replace('http', 'ws')}/api/stream`, { headers });
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', () => resolve(-1));
      });
    expect(await attempt({})).toBe(401);
    expect(await attempt({ authorization: `Bearer ${s.host.token}`, origin: 'http://evil.example' })).toBe(403);
    expect(await attempt({ authorization: `Bearer ${s.host.token}`, origin: s.host.origin })).toBe(101);
  });

  it('rejects malformed JSON and oversized bodies with the error envelope', async () => {
    const auth = { authorization: `Bearer ${s.host.token}` };
    const bad = await call(auth, '{nope');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const big = await call(auth, JSON.stringify({ pad: 'x'.repeat(3 * 1024 * 1024) }));
    expect(big.status).toBe(413);
    const unknown = await fetch(`${s.host.origin}/api/call/nope.nothing`, {
      method: 'POST',
      headers: auth,
      body: '{}',
    });
    expect(unknown.status).toBe(404);
  });

  it('never serves files outside the renderer folder', async () => {
    const auth = { authorization: `Bearer ${s.host.token}` };
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt']) {
      const res = await fetch(`${s.host.origin}${p}`, { headers: auth });
      expect(res.status).toBe(404);
    }
  });
});
