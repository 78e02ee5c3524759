// Who may talk to the web host: the Host and Origin checks, the per-launch token (a Bearer header or
// the cookie the launch URL sets) and the answers to requests that fail them. Routes (web-routes.ts)
// only ever see requests that passed.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-util';

export const TOKEN_COOKIE = 'pskills_token';

/** Cookies by name. One that does not decode (another app's `x=100%`) is skipped, never thrown on:
 *  every app on 127.0.0.1 shares this cookie jar. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    try {
      out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // malformed percent-encoding: not ours, ignore it
    }
  }
  return out;
}

function sameToken(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The checks for one host and its token. The address is known once the server listens (`listening`). */
export class WebAuth {
  private allowedHosts = new Set<string>();
  origin = '';

  constructor(readonly token: string) {}

  listening(host: string, port: number): void {
    this.origin = `http://${host}:${port}`;
    this.allowedHosts = new Set([`${host}:${port}`, `localhost:${port}`]);
  }

  authorized(req: IncomingMessage): boolean {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return sameToken(bearer, this.token) || sameToken(parseCookies(req.headers.cookie)[TOKEN_COOKIE], this.token);
  }

  /** Why a request comes from somewhere else, or null. The Host check stops DNS rebinding; the Origin
   *  check stops other sites' pages from calling us. */
  foreign(req: IncomingMessage): string | null {
    if (!this.allowedHosts.has(req.headers.host ?? '')) return `host "${req.headers.host ?? ''}" not allowed`;
    const o = req.headers.origin;
    if (o !== undefined && o !== this.origin && o !== this.origin.replace('127.0.0.1', 'localhost'))
      return `origin "${o}" not allowed`;
    return null;
  }

  /** Why a WebSocket upgrade is refused, as the status line to answer it with; null lets it through. */
  upgradeRefusal(req: IncomingMessage): string | null {
    if (this.foreign(req)) return '403 Forbidden';
    return this.authorized(req) ? null : '401 Unauthorized';
  }

  /** Lets an HTTP request through (true), or answers it: 403 from elsewhere, the launch URL's
   *  cookie and redirect, 401 without the token. */
  admit(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const why = this.foreign(req);
    if (why) {
      sendJson(res, 403, { ok: false, error: { code: 'forbidden', message: why } });
      return false;
    }
    const given = url.searchParams.get('token');
    if (req.method === 'GET' && given !== null && url.pathname === '/') {
      if (!sameToken(given, this.token)) {
        sendJson(res, 401, { ok: false, error: { code: 'unauthorized', message: 'wrong token' } });
        return false;
      }
      res.writeHead(302, {
        'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(this.token)}; HttpOnly; SameSite=Strict; Path=/`,
        location: '/',
      });
      res.end();
      return false;
    }
    if (this.authorized(req)) return true;
    const message = 'missing or wrong token (send Authorization: Bearer <token>)';
    // The OpenAI-compatible endpoint lives under /v1/, and OpenAI clients read only their own error shape.
    if (url.pathname.startsWith('/v1/')) {
      sendJson(res, 401, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    } else {
      sendJson(res, 401, { ok: false, error: { code: 'unauthorized', message } });
    }
    return false;
  }
}
