// Small HTTP helpers for the web host: bodies with a size cap, JSON replies, status mapping.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../../../common/errors';
import { StudioError } from '../../../common/errors';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  bad_skill: 422,
  import_failed: 422,
  cancelled: 499,
  internal: 500,
};

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new StudioError('invalid_input', `request body over ${limit} bytes`, { status: 413 });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new StudioError('invalid_input', `request body over ${limit} bytes`, { status: 413 });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(data),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(data);
}

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
