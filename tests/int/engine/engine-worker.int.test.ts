// Compiling in the worker (main/engine/compile-client.ts) against compileSkill in this thread on the
// same bundle: equal adapters and generations, progress and tokens, cancel, errors with their code,
// and a worker that dies.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineWorker } from '../../../main/engine/engine-client';
import { compileSkill, generateAll, loadBundle, type Bundle } from '../../../main/engine';
import { APP_ROOT } from '../../../main/paths';

const HYPER_DIR = join(APP_ROOT, 'tests/fixtures/bundle-hyper');
const TEXT = '# Review\n\n' + 'Read the migration and list every table it touches.\n'.repeat(40);

let bundle: Bundle;
const worker = new EngineWorker();
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

  it('generates the tokens generateAll gives in this thread, streamed row by row, with an adapter', async () => {
    const { engine } = await compileSkill(bundle, TEXT);
    const requests = [
      { prompt: 'Which lock does adding a column take?', adapter: engine, maxNewTokens: 12, stopTokenIds: [] },
      { prompt: 'List the tables.', adapter: null, maxNewTokens: 7, stopTokenIds: [] },
    ];
    const want = await generateAll(bundle, requests);
    const it = worker.generateBatch(bundle, requests);
    const streamed: number[][] = [[], []];
    let next = await it.next();
    for (; !next.done; next = await it.next()) streamed[next.value.row]!.push(next.value.tokenId);
    expect(next.value).toEqual(want);
    expect(streamed).toEqual(want.map((r) => [...r.tokens]));
    // The adapter was copied, not transferred: it still serves this thread.
    expect(engine.targets.values().next().value!.A.length).toBeGreaterThan(0);
  });

  it('generation: cancel finishes rows as cancelled, errors keep their code, an early break ends it', async () => {
    const ctl = new AbortController();
    const it = worker.generateBatch(bundle, [{ prompt: 'Go on.', maxNewTokens: 500, stopTokenIds: [] }], {
      signal: ctl.signal,
    });
    let next = await it.next();
    ctl.abort();
    while (!next.done) next = await it.next();
    expect(next.value[0]!.finishReason).toBe('cancelled');
    const bad = worker.generateBatch(bundle, []);
    await expect(bad.next()).rejects.toMatchObject({ code: 'invalid_input', message: 'generateBatch: no requests' });
    for await (const _ of worker.generateBatch(bundle, [{ prompt: 'Hi', maxNewTokens: 50, stopTokenIds: [] }])) break;
    expect((await generateAll(bundle, [{ prompt: 'Hi', maxNewTokens: 2, stopTokenIds: [] }]))[0]!.tokens).toHaveLength(
      2,
    );
  });

  it('a worker that dies fails its compiles with a clear message; the next compile starts a new one', async () => {
    const dying = new EngineWorker(join(APP_ROOT, 'tests/fixtures/no-such-worker.mjs'));
    await expect(dying.compile(bundle, TEXT)).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringMatching(
        /^engine worker failed \(.*no-such-worker\.mjs.*\) during a compile or generation/,
      ),
    });
    await dying.dispose();
  });
});
