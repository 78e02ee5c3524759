// The local web host: serves the built renderer and the StudioApi (HTTP calls, WebSocket
// streams) on 127.0.0.1, behind a per-launch token. Other origins and hosts are refused.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Contract } from '../../../common/api/define';
import { MAX_STREAM_MESSAGE_BYTES } from '../../../common/api/wire';
import { StudioError, toEnvelope } from '../../../common/errors';
import type { Dispatcher } from '../dispatcher';
import { parseCookies, readBody, sendJson, STATUS_OF } from './http-util';
import { serveStatic } from './static-files';
import { StreamServer } from './stream-server';

export const TOKEN_COOKIE = 'pskills_token';
const MAX_CALL_BYTES = 2 * 1024 * 1024;
const MAX_WS_MESSAGE = MAX_STREAM_MESSAGE_BYTES;

/** Extra routes mounted beside the studio API (the OpenAI-compatible endpoint, later). */
export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export interface WebHostOptions {
  dispatcher: Dispatcher<Contract>;
  staticDir: string | null; // built renderer; null serves the API only
  host?: string;
  port?: number;
  token?: string;
  routes?: Route[];
}

export interface WebHost {
  url: string; // with ?token=…, what the user opens
  origin: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** One stream connection. Protocol errors (a message over maxPayload, a reserved opcode, bad UTF-8)
 *  reach 'error' after ws has already closed this socket with the matching code (1009, 1002, 1007). */
function serveSocket(ws: WebSocket, dispatcher: Dispatcher<Contract>): void {
  const streams = new StreamServer(dispatcher, (msg) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  });
  ws.on('error', () => {}); // already closing with its code; the listener keeps the error from being uncaught
  ws.on('message', (data) => {
    let msg: unknown;
    try {
      msg = JSON.parse(String(data));
    } catch {
      msg = null;
    }
    streams.receive(msg);
  });
  ws.on('close', () => streams.close());
}

function sameToken(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function startWebHost(opts: WebHostOptions): Promise<WebHost> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? randomBytes(24).toString('base64url');
  let allowedHosts: Set<string> = new Set();
  let origin = '';

  const authorized = (req: IncomingMessage): boolean => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return sameToken(bearer, token) || sameToken(parseCookies(req.headers.cookie)[TOKEN_COOKIE], token);
  };
  // Host check stops DNS rebinding; Origin check stops other sites' pages from calling us.
  const foreign = (req: IncomingMessage): string | null => {
    if (!allowedHosts.has(req.headers.host ?? '')) return `host "${req.headers.host ?? ''}" not allowed`;
    const o = req.headers.origin;
    if (o !== undefined && o !== origin && o !== origin.replace('127.0.0.1', 'localhost')) return `origin "${o}" not allowed`;
    return null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', origin);
    const why = foreign(req);
    if (why) return sendJson(res, 403, { ok: false, error: { code: 'forbidden', message: why } });

    const given = url.searchParams.get('token');
    if (req.method === 'GET' && given !== null && url.pathname === '/') {
      if (!sameToken(given, token)) return sendJson(res, 401, { ok: false, error: { code: 'unauthorized', message: 'wrong token' } });
      res.writeHead(302, {
        'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
        location: '/',
      });
      return void res.end();
    }
    if (!authorized(req)) {
      const message = 'missing or wrong token (send Authorization: Bearer <token>)';
      // OpenAI clients expect their own error shape.
      if (url.pathname.startsWith('/v1/')) {
        return sendJson(res, 401, { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      }
      return sendJson(res, 401, { ok: false, error: { code: 'unauthorized', message } });
    }
    for (const route of opts.routes ?? []) if (await route(req, res, url)) return;

    if (url.pathname.startsWith('/api/call/')) {
      if (req.method !== 'POST') return sendJson(res, 405, { ok: false, error: { code: 'invalid_input', message: 'use POST' } });
      const wire = url.pathname.slice('/api/call/'.length);
      try {
        const raw = await readBody(req, MAX_CALL_BYTES);
        let input: unknown;
        try {
          input = raw.length ? JSON.parse(raw.toString('utf8')) : {};
        } catch {
          throw new StudioError('invalid_input', `${wire}: body is not valid JSON`);
        }
        const value = await opts.dispatcher.call(wire, input);
        return sendJson(res, 200, { ok: true, value });
      } catch (err) {
        const error = toEnvelope(err);
        const status = (error.details as { status?: number } | undefined)?.status ?? STATUS_OF[error.code];
        return sendJson(res, status, { ok: false, error });
      }
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendJson(res, 405, { ok: false, error: { code: 'invalid_input', message: 'method not allowed' } });
    }
    if (opts.staticDir) return serveStatic(opts.staticDir, url.pathname, res);
    return sendJson(res, 404, { ok: false, error: { code: 'not_found', message: url.pathname } });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, error: toEnvelope(err) });
      else res.destroy();
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_MESSAGE });
  // Nothing one client sends may throw out of these handlers: an uncaught error here ends the process.
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    try {
      const url = new URL(req.url ?? '/', origin);
      const why = foreign(req) ?? (authorized(req) ? null : 'unauthorized');
      if (why || url.pathname !== '/api/stream') {
        socket.end(`HTTP/1.1 ${why === 'unauthorized' ? '401 Unauthorized' : why ? '403 Forbidden' : '404 Not Found'}\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, opts.dispatcher));
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://${host}:${port}`;
  allowedHosts = new Set([`${host}:${port}`, `localhost:${port}`]);

  return {
    url: `${origin}/?token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
