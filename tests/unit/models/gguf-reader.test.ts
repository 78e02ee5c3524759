// The GGUF gate off the main thread (main/models/gguf-reader.ts): a header past its time budget is
// refused by the worker itself, a worker that never answers is given up on after the budget and a
// grace (the file reported as skipped), and the next file is read by a fresh worker.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgufReader } from '../../../main/models/gguf-reader';
import { buildCase, CASES } from './gguf-cases';

const dir = mkdtempSync(join(tmpdir(), 'pskills-gguf-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const byName = (part: string) => CASES.cases.find((c) => c.name.includes(part))!;

describe('GgufReader', () => {
  it('reads a good header in the worker and refuses a bad one with the gate’s reason', async () => {
    const reader = new GgufReader();
    try {
      const ok = await reader.inspect(buildCase(byName('a valid llama header'), dir, 'ok.gguf'));
      expect(ok).toMatchObject({ ok: true, inspection: { summary: { architecture: 'llama', tensors: 1 } } });
      const bad = await reader.inspect(buildCase(byName('general.alignment = 0'), dir, 'a0.gguf'));
      expect(bad).toMatchObject({ ok: false, gate: true, missing: false });
      expect(!bad.ok && bad.reason).toMatch(/general\.alignment/);
      expect(await reader.inspect(join(dir, 'none.gguf'))).toMatchObject({ ok: false, missing: true });
    } finally {
      await reader.dispose();
    }
  });

  it('refuses a header past its time budget (10^6 strings with a budget of 0 ms)', async () => {
    const reader = new GgufReader(undefined, 0);
    try {
      const r = await reader.inspect(buildCase(byName('10^6 empty strings'), dir, 'strings.gguf'));
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toMatch(/over the 0 ms time budget for a GGUF header, in metadata key/);
    } finally {
      await reader.dispose();
    }
  });

  it('gives up on a worker that never answers, reports the file as skipped, and goes on', async () => {
    const silent = join(dir, 'silent-worker.mjs');
    writeFileSync(silent, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => {});\n");
    const reader = new GgufReader(silent, 50, 200);
    try {
      const t0 = performance.now();
      const first = await reader.inspect(join(dir, 'ok.gguf'));
      expect(first).toMatchObject({ ok: false, gate: true });
      expect(!first.ok && first.reason).toMatch(/no answer within the 50 ms time budget/);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(240); // waited for budget + grace, no more forever
      expect((await reader.inspect(join(dir, 'ok.gguf'))).ok).toBe(false); // a fresh worker, given up on too
    } finally {
      await reader.dispose();
    }
  });
});
