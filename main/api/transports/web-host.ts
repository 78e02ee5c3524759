// The local web host: serves the built renderer and the StudioApi (HTTP calls, WebSocket streams) on
// 127.0.0.1, behind a per-launch token. This file wires the server; who is let in is web-auth.ts,
// what they get is web-routes.ts.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { MAX_STREAM_MESSAGE_BYTES } from '../../../common/api/wire';
import { toEnvelope } from '../../../common/errors';
import { sendJson } from './http-util';
import { STREAM_PROTOCOL, WebAuth } from './web-auth';
import { route, serveSocket, type RouteOptions } from './web-routes';

export type { Route } from './web-routes';

export interface WebHostOptions extends RouteOptions {
  host?: string;
  port?: number;
  token?: string;
}

export interface WebHost {
  url: string; // with #token=… (the fragment, never sent to a server), what the user opens
  origin: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export async function startWebHost(opts: WebHostOptions): Promise<WebHost> {
  const host = opts.host ?? '127.0.0.1';
  const auth = new WebAuth(opts.token ?? randomBytes(24).toString('base64url'));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', auth.origin);
    if (auth.admit(req, res, url)) await route(opts, req, res, url);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, error: toEnvelope(err) });
      else res.destroy();
    });
  });

  // A browser offers [pskills, pskills.token.<T>]: the answer names only `pskills`, never the token.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_STREAM_MESSAGE_BYTES,
    handleProtocols: (offered) => (offered.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
  });
  // Nothing one client sends may throw out of these handlers: an uncaught error here ends the process.
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    try {
      const url = new URL(req.url ?? '/', auth.origin);
      const refusal = auth.upgradeRefusal(req) ?? (url.pathname === '/api/stream' ? null : '404 Not Found');
      if (refusal) {
        socket.end(`HTTP/1.1 ${refusal}\r\n\r\n`);
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
  auth.listening(host, port);

  return {
    url: auth.launchUrl,
    origin: auth.origin,
    port,
    token: auth.token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
