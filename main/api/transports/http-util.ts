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
  unavailable: 503,
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

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(data),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(data);
}
