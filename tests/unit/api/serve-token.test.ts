// `pskills serve --port P` keeps its token in the data folder so a restart prints the same address;
// a random port gets a fresh token each launch. The file is owner-only, and a link or damaged file in
// its place is replaced, never followed (docs/security.md "The launch token").
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SERVE_TOKEN_FILE, stableToken } from '../../../main/api/transports/serve-token';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pskills-serve-token-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('stableToken', () => {
  it('is null for port 0: a fresh token per launch', () => {
    expect(stableToken(dir, 0)).toBeNull();
  });

  it('is made once, kept owner-only, and the same on the next launch', () => {
    const a = stableToken(dir, 41234)!;
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(stableToken(dir, 41234)).toBe(a);
    expect(lstatSync(join(dir, SERVE_TOKEN_FILE)).mode & 0o777).toBe(0o600);
  });

  it('replaces a damaged file, and a link without writing through it', () => {
    writeFileSync(join(dir, SERVE_TOKEN_FILE), 'not a token');
    const a = stableToken(dir, 5000)!;
    expect(a).toMatch(/^[A-Za-z0-9_-]{32}$/);
    rmSync(join(dir, SERVE_TOKEN_FILE));
    const target = join(dir, 'elsewhere');
    writeFileSync(target, 'the user wrote this');
    symlinkSync(target, join(dir, SERVE_TOKEN_FILE));
    const b = stableToken(dir, 5000)!;
    expect(readFileSync(target, 'utf8')).toBe('the user wrote this');
    expect(lstatSync(join(dir, SERVE_TOKEN_FILE)).isFile()).toBe(true);
    expect(readFileSync(join(dir, SERVE_TOKEN_FILE), 'utf8').trim()).toBe(b);
  });
});
