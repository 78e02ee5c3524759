// Serves the built renderer: no directory listing, no path escaping the folder.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { sendJson } from './http-util';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

// Same policy as renderer/index.html's meta tag, sent as a header too.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export async function serveStatic(root: string, pathname: string, res: ServerResponse): Promise<void> {
  let rel: string;
  try {
    rel = decodeURIComponent(pathname);
  } catch {
    return sendJson(res, 400, { ok: false, error: { code: 'invalid_input', message: 'bad path' } });
  }
  if (rel === '/' || rel === '') rel = '/index.html';
  const file = normalize(join(root, rel));
  if (!file.startsWith(normalize(root) + sep)) {
    return sendJson(res, 404, { ok: false, error: { code: 'not_found', message: pathname } });
  }
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return sendJson(res, 404, { ok: false, error: { code: 'not_found', message: pathname } });
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': info.size,
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': rel === '/index.html' ? 'no-store' : 'max-age=3600',
  });
  createReadStream(file).pipe(res);
}
