// `pskills skills list | head -1`: the reader leaves before the output ends, and writing to the closed
// pipe fails with EPIPE. The real binary must then end quietly (no unhandled 'error' event and stack
// trace), with status 0, or with the failure status a failed command had already set.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');

/** Runs `pskills ARGS` with its stdout a pipe whose reading end is closed before anything is written. */
function pskillsIntoClosedPipe(
  ...args: string[]
): Promise<{ code: number | null; signal: string | null; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy(); // the reader is gone: every write to stdout fails with EPIPE
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, err }));
  });
}

describe('pskills with stdout closed by the reader (EPIPE)', () => {
  it('ends quietly with status 0', async () => {
    const r = await pskillsIntoClosedPipe('help');
    expect(r.err).toBe('');
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
  });

  it('a command that fails keeps its status and its one-line error', async () => {
    const r = await pskillsIntoClosedPipe('frobnicate');
    expect(r.err).toBe('pskills: unknown command "frobnicate"\n');
    expect(r.code).toBe(2);
  });
});
