// What the web host answers once a request is admitted (web-auth.ts): the extra routes (the
// OpenAI-compatible endpoint), StudioApi calls on POST /api/call/<method>, the built renderer, and
// the message protocol on each /api/stream WebSocket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { Contract } from '../../../common/api/define';
import { StudioError, toEnvelope } from '../../../common/errors';
import type { Dispatcher } from '../dispatcher';
import { readBody, sendJson, STATUS_OF } from './http-util';
import { serveStatic } from './static-files';
import { StreamServer } from './stream-server';

const MAX_CALL_BYTES = 2 * 1024 * 1024;

/** Extra routes mounted beside the studio API (the OpenAI-compatible endpoint); true when handled. */
export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export interface RouteOptions {
  dispatcher: Dispatcher<Contract>;
  staticDir: string | null; // built renderer; null serves the API only
  routes?: Route[];
}

/** POST /api/call/<method>: one StudioApi call, its value or its error envelope as JSON. */
async function apiCall(
  dispatcher: Dispatcher<Contract>,
  req: IncomingMessage,
  res: ServerResponse,
  wire: string,
): Promise<void> {
  if (req.method !== 'POST')
    return sendJson(res, 405, { ok: false, error: { code: 'invalid_input', message: 'use POST' } });
  try {
    const raw = await readBody(req, MAX_CALL_BYTES);
    let input: unknown;
    try {
      input = raw.length ? JSON.parse(raw.toString('utf8')) : {};
    } catch {
      throw new StudioError('invalid_input', `${wire}: body is not valid JSON`);
    }
    const value = await dispatcher.call(wire, input);
    return sendJson(res, 200, { ok: true, value });
  } catch (err) {
    const error = toEnvelope(err);
    const status = (error.details as { status?: number } | undefined)?.status ?? STATUS_OF[error.code];
    return sendJson(res, status, { ok: false, error });
  }
}

export async function route(opts: RouteOptions, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  for (const r of opts.routes ?? []) if (await r(req, res, url)) return;
  if (url.pathname.startsWith('/api/call/'))
    return apiCall(opts.dispatcher, req, res, url.pathname.slice('/api/call/'.length));
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return sendJson(res, 405, { ok: false, error: { code: 'invalid_input', message: 'method not allowed' } });
  }
  if (opts.staticDir) return serveStatic(opts.staticDir, url.pathname, res);
  return sendJson(res, 404, { ok: false, error: { code: 'not_found', message: url.pathname } });
}

/** One stream connection. Protocol errors (a message over maxPayload, a reserved opcode, bad UTF-8)
 *  reach 'error' after ws has already closed this socket with the matching code (1009, 1002, 1007). */
export function serveSocket(ws: WebSocket, dispatcher: Dispatcher<Contract>): void {
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
