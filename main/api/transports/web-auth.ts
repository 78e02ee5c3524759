// Who may talk to the web host: the Host and Origin checks, the per-launch token and the answers to
// requests that fail them. Routes (web-routes.ts) only ever see requests that passed.
// No cookie ever carries the token (docs/security.md "The launch token"): cookies for 127.0.0.1 go to
// every port on it, so any other local server a page visits would receive it. The printed address
// holds the token in its fragment (never sent to a server); the page keeps it in sessionStorage
// (scoped to this origin, port included) and sends it as `Authorization: Bearer` on calls and as a
// WebSocket subprotocol on streams. Static files need no token and hold no secret.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-util';

/** The subprotocol the studio's streams speak; the token rides as a second one, `pskills.token.<T>`. */
export const STREAM_PROTOCOL = 'pskills';
export const TOKEN_PROTOCOL_PREFIX = 'pskills.token.';

function sameToken(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The credentials of an `Authorization` header: the auth scheme is case-insensitive (RFC 7235 §2.1). */
export function bearerToken(header: string | undefined): string | undefined {
  return /^bearer +(\S+) *$/i.exec(header ?? '')?.[1];
}

/** The token a browser WebSocket offers as a subprotocol, if any. */
export function protocolToken(header: string | string[] | undefined): string | undefined {
  const offered = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((p) => p.trim());
  return offered.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX))?.slice(TOKEN_PROTOCOL_PREFIX.length);
}

/** Paths that need the token: the API, its streams and the OpenAI-compatible endpoint. */
export const needsToken = (pathname: string): boolean =>
  pathname.startsWith('/api/') || pathname === '/api' || pathname.startsWith('/v1/') || pathname === '/v1';

/** The checks for one host and its token. The address is known once the server listens (`listening`). */
export class WebAuth {
  private allowedHosts = new Set<string>();
  origin = '';

  constructor(readonly token: string) {}

  listening(host: string, port: number): void {
    this.origin = `http://${host}:${port}`;
    this.allowedHosts = new Set([`${host}:${port}`, `localhost:${port}`]);
  }

  /** The address to print: the token in the fragment, which browsers never send to a server. */
  get launchUrl(): string {
    return `${this.origin}/#token=${encodeURIComponent(this.token)}`;
  }

  authorized(req: IncomingMessage): boolean {
    return sameToken(bearerToken(req.headers.authorization), this.token);
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

  /** Why a WebSocket upgrade is refused, as the status line to answer it with; null lets it through.
   *  The token comes as `Authorization: Bearer` (Node clients) or as a subprotocol (browsers). */
  upgradeRefusal(req: IncomingMessage): string | null {
    if (this.foreign(req)) return '403 Forbidden';
    if (this.authorized(req)) return null;
    return sameToken(protocolToken(req.headers['sec-websocket-protocol']), this.token) ? null : '401 Unauthorized';
  }

  /** Lets an HTTP request through (true), or answers it: 403 from elsewhere, 401 without the token
   *  where one is needed. Static files (the built renderer) need none. */
  admit(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    const why = this.foreign(req);
    if (why) {
      sendJson(res, 403, { ok: false, error: { code: 'forbidden', message: why } });
      return false;
    }
    if (!needsToken(url.pathname) || this.authorized(req)) return true;
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
