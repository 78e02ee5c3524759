// The web host's checks on their own (web-auth.ts): Host and Origin, the token by header (any case of
// the scheme) or WebSocket subprotocol, never by cookie, and the shape of each refusal. The same checks over a real server are in
// tests/int/api/web-host*.int.test.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bearerToken, WebAuth } from '../../../main/api/transports/web-auth';

const TOKEN = 'tok-123';
const auth = new WebAuth(TOKEN);
auth.listening('127.0.0.1', 4000);

const req = (headers: Record<string, string>, method = 'GET') =>
  ({ method, headers: { host: '127.0.0.1:4000', ...headers } }) as unknown as IncomingMessage;

/** Records what admit() answers. */
function answer(
  r: IncomingMessage,
  path: string,
): { admitted: boolean; status?: number; headers?: Record<string, unknown>; body?: unknown } {
  const out: { status?: number; headers?: Record<string, unknown>; body?: unknown } = {};
  const res = {
    writeHead: (status: number, headers: Record<string, unknown>) => Object.assign(out, { status, headers }),
    end: (data?: string) => {
      if (data) out.body = JSON.parse(data);
    },
  } as unknown as ServerResponse;
  const admitted = auth.admit(r, res, new URL(path, auth.origin));
  return { admitted, ...out };
}

describe('WebAuth', () => {
  it('admits the token as a Bearer header, the scheme in any case (RFC 7235), never as a cookie', () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR'])
      expect(answer(req({ authorization: `${scheme} ${TOKEN}` }), '/api/call/app.info').admitted, scheme).toBe(true);
    expect(answer(req({ cookie: `pskills_token=${TOKEN}` }), '/api/call/app.info')).toMatchObject({
      admitted: false,
      status: 401,
    });
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('bearer  tok ')).toBe('tok');
  });

  it('lets static files through without a token, and sets no cookie anywhere', () => {
    for (const path of ['/', '/index.html', '/assets/app.js', `/?token=${TOKEN}`]) {
      const a = answer(req({}), path);
      expect(a.admitted, path).toBe(true);
      expect(a.headers, path).toBeUndefined();
    }
    expect(auth.launchUrl).toBe(`http://127.0.0.1:4000/#token=${TOKEN}`);
  });

  it('refuses another Host or Origin with 403, even with the token', () => {
    const bearer = { authorization: `Bearer ${TOKEN}` };
    expect(answer(req({ ...bearer, host: 'evil.example:4000' }), '/')).toMatchObject({
      admitted: false,
      status: 403,
      body: { error: { code: 'forbidden' } },
    });
    expect(answer(req({ ...bearer, origin: 'http://evil.example' }), '/')).toMatchObject({
      admitted: false,
      status: 403,
    });
    expect(answer(req({ ...bearer, host: 'localhost:4000', origin: 'http://localhost:4000' }), '/').admitted).toBe(
      true,
    );
  });

  it('answers 401 without the token: the studio envelope, or the OpenAI shape under /v1/', () => {
    expect(answer(req({ authorization: 'Bearer nope' }), '/api/call/app.info')).toMatchObject({
      admitted: false,
      status: 401,
      body: { ok: false, error: { code: 'unauthorized' } },
    });
    expect(answer(req({}), '/v1/models')).toMatchObject({
      admitted: false,
      status: 401,
      body: { error: { type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
    });
  });

  it('gives a WebSocket upgrade its refusal status line', () => {
    expect(auth.upgradeRefusal(req({ authorization: `Bearer ${TOKEN}` }))).toBeNull();
    expect(auth.upgradeRefusal(req({}))).toBe('401 Unauthorized');
    expect(auth.upgradeRefusal(req({ 'sec-websocket-protocol': `pskills, pskills.token.${TOKEN}` }))).toBeNull();
    expect(auth.upgradeRefusal(req({ 'sec-websocket-protocol': 'pskills, pskills.token.nope' }))).toBe(
      '401 Unauthorized',
    );
    expect(auth.upgradeRefusal(req({ cookie: `pskills_token=${TOKEN}` }))).toBe('401 Unauthorized');
    expect(auth.upgradeRefusal(req({ authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' }))).toBe(
      '403 Forbidden',
    );
  });
});
