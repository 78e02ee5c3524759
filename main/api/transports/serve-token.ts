// The web host's token for `pskills serve --port P`: kept in the data folder (owner-only), so a
// restart on the same port prints the same address and an open tab reconnects with Retry. Without
// --port (a random port) every launch gets a fresh token. docs/security.md "The launch token".
import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SERVE_TOKEN_FILE = 'serve-token';
const TOKEN = /^[A-Za-z0-9_-]{32}$/;

export const newToken = (): string => randomBytes(24).toString('base64url');

/** The kept token of `dataDir`, made on first use; null when `port` is 0 (no stable address asked). */
export function stableToken(dataDir: string, port: number): string | null {
  if (port === 0) return null;
  const file = join(dataDir, SERVE_TOKEN_FILE);
  const kept = readKept(file);
  if (kept) return kept;
  const token = newToken();
  // Whatever was there (damaged, a link) goes; 'wx' never follows a link put back meanwhile.
  rmSync(file, { force: true });
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  return token;
}

/** A regular file of ours with one token in it, or null (missing, a link, damaged: then replaced). */
function readKept(file: string): string | null {
  try {
    const st = lstatSync(file);
    if (!st.isFile() || st.size > 64) return null;
    const text = readFileSync(file, 'utf8').trim();
    return TOKEN.test(text) ? text : null;
  } catch {
    return null;
  }
}
