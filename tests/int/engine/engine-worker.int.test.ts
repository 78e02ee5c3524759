// Compiling in the worker (main/engine/compile-client.ts) against compileSkill in this thread on the
// same bundle: equal adapters, progress, cancel, errors with their code, and a worker that dies.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompileWorker } from '../../../main/engine/compile-client';
import { compileSkill, loadBundle, type Bundle } from '../../../main/engine';
import { APP_ROOT } from '../../../main/paths';

const HYPER_DIR = join(APP_ROOT, 'tests/fixtures/bundle-hyper');
const TEXT = '# Review\n\n' + 'Read the migration and list every table it touches.\n'.repeat(40);

let bundle: Bundle;
const worker = new CompileWorker();
beforeAll(async () => {
  bundle = await loadBundle(HYPER_DIR);
});
afterAll(async () => {
  await worker.dispose();
  await bundle?.dispose();
});

describe('compile in a worker thread', () => {
  it('gives the adapter compileSkill gives in this thread, with progress per chunk', async () => {
    const want = await compileSkill(bundle, TEXT);
    const progress: number[] = [];
    const got = await worker.compile(bundle, TEXT, { onProgress: (p) => progress.push(p.chunk) });
    expect(want.chunks.length).toBeGreaterThan(1);
    expect(progress).toEqual(Array.from({ length: want.chunks.length + 1 }, (_, i) => i));
    expect([got.rank, got.tokens, got.chunks, got.encoderFile]).toEqual([
      want.rank,
      want.tokens,
      want.chunks,
      want.encoderFile,
    ]);
    expect([...got.adapter.targets.keys()]).toEqual([...want.adapter.targets.keys()]);
    for (const [key, w] of want.adapter.targets) {
      const g = got.adapter.targets.get(key)!;
      for (const [x, y] of [
        [g.A, w.A],
        [g.B, w.B],
      ] as const) {
        expect(x.length).toBe(y.length);
        let max = 0;
        for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i]! - y[i]!));
        expect(max).toBeLessThanOrEqual(1e-6);
      }
    }
    // The engine form is folded and checked here, as compileSkill's is.
    expect(got.engine.folded).toBe(true);
    expect(got.engine.rank).toBe(want.engine.rank);
  });

  it('errors keep their code and message', async () => {
    await expect(worker.compile(bundle, '')).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'cannot compile an empty skill text',
    });
  });

  it('cancel stops a compile between chunks with code cancelled; the worker goes on', async () => {
    const ctl = new AbortController();
    const long = worker.compile(bundle, TEXT.repeat(20), {
      signal: ctl.signal,
      onProgress: (p) => p.chunk === 1 && ctl.abort(),
    });
    await expect(long).rejects.toMatchObject({ code: 'cancelled', message: 'compile cancelled' });
    expect((await worker.compile(bundle, TEXT)).rank).toBeGreaterThan(0);
    await expect(worker.compile(bundle, TEXT, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'cancelled',
    });
  });

  it('a worker that dies fails its compiles with a clear message; the next compile starts a new one', async () => {
    const dying = new CompileWorker(join(APP_ROOT, 'tests/fixtures/no-such-worker.mjs'));
    await expect(dying.compile(bundle, TEXT)).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringMatching(/^compile worker failed \(.*no-such-worker\.mjs.*\) while compiling a skill for /),
    });
    await dying.dispose();
  });
});
