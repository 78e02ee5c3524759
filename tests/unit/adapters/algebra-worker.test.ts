// The worker path of the adapter algebra against the same math run in this thread: equal results,
// errors that keep their class and message, cancel, and a worker that dies mid-job.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AlgebraWorker } from '../../../main/adapters/algebra-client';
import { ALGEBRA_OPS } from '../../../main/adapters/algebra-ops';
import type { Adapter } from '../../../main/adapters/types';
import { AdapterValidationError } from '../../../main/adapters/validate';
import { randomAdapter, SHAPES } from './builders';

const worker = new AlgebraWorker();
afterAll(() => worker.dispose());

const adapters = () => [1, 2, 3, 4].map((seed) => randomAdapter({ seed, rank: 4 + seed }));
const weights = [0.4, -0.3, 0.2, 0.7];

function expectAdapterClose(got: Adapter, want: Adapter): void {
  expect(got.rank).toBe(want.rank);
  expect(got.alpha).toBeCloseTo(want.alpha, 12);
  expect([...got.targets.keys()]).toEqual([...want.targets.keys()]);
  for (const [key, w] of want.targets) {
    const g = got.targets.get(key)!;
    expect([g.dIn, g.dOut]).toEqual([w.dIn, w.dOut]);
    for (const [x, y] of [
      [g.A, w.A],
      [g.B, w.B],
    ] as const) {
      expect(x).toBeInstanceOf(Float32Array);
      expect(x.length).toBe(y.length);
      for (let i = 0; i < x.length; i++) expect(Math.abs(x[i]! - y[i]!)).toBeLessThanOrEqual(1e-6);
    }
  }
}

describe('adapter algebra worker', () => {
  it.each(['cat', 'linear', 'svd'] as const)('%s merge equals the in-thread merge', async (method) => {
    const src = method === 'linear' ? [1, 2].map((seed) => randomAdapter({ seed, rank: 4 })) : adapters();
    const w = weights.slice(0, src.length);
    const job = { method, adapters: src, weights: w, rank: 6 };
    expectAdapterClose(await worker.run('merge', job), ALGEBRA_OPS.merge(job));
  });

  it('EMA step, preview, visualizer and similarity stats equal the in-thread ones', async () => {
    const [g, n] = adapters();
    const ema = { global: g!, next: n!, beta: 0.1, rankBudget: 5 };
    expectAdapterClose(await worker.run('ema', ema), ALGEBRA_OPS.ema(ema));
    const job = { method: 'svd' as const, adapters: adapters(), weights, rank: 6 };
    expect(await worker.run('mergePreview', job)).toEqual(ALGEBRA_OPS.mergePreview(job));
    const merged = ALGEBRA_OPS.merge(job);
    const vis = { adapter: merged, count: 4, truncated: { sources: adapters(), weights } };
    expect(await worker.run('visualize', vis)).toEqual(ALGEBRA_OPS.visualize(vis));
    const sim = { adapters: adapters(), linearWeights: null };
    expect(await worker.run('similarity', sim)).toEqual(ALGEBRA_OPS.similarity(sim));
    const det = { adapter: merged, count: 3 };
    expect(await worker.run('details', det)).toEqual(ALGEBRA_OPS.details(det));
  });

  it('transfer moves the inputs (detached here) and still computes the same result', async () => {
    const src = adapters();
    const want = ALGEBRA_OPS.merge({ method: 'cat', adapters: adapters(), weights });
    const got = await worker.run('merge', { method: 'cat', adapters: src, weights }, { transfer: true });
    expectAdapterClose(got, want);
    expect(src[0]!.targets.values().next().value!.A.length).toBe(0); // detached by the transfer
    // Without transfer the caller keeps its arrays.
    const kept = adapters();
    await worker.run('merge', { method: 'cat', adapters: kept, weights });
    expect(kept[0]!.targets.values().next().value!.A.length).toBe(SHAPES[0]!.dIn * 5);
  });

  it('validation and range errors surface with their class and message', async () => {
    const err = await worker.run('merge', { method: 'cat', adapters: adapters(), weights: [1] }).catch((e) => e);
    expect(err).toBeInstanceOf(AdapterValidationError);
    expect((err as Error).message).toMatch(/weights/);
    const range = await worker
      .run('merge', { method: 'svd', adapters: adapters(), weights, rank: -1 })
      .catch((e: Error) => e);
    expect(range).toBeInstanceOf(RangeError);
    expect((range as Error).message).toBe('target rank k is -1, expected an integer ≥ 0');
    const beta = await worker
      .run('ema', { global: null, next: adapters()[0]!, beta: 2, rankBudget: 4 })
      .catch((e) => e);
    expect((beta as Error).message).toBe('beta is 2, expected a number in [0, 1]');
  });

  it('a cancelled job rejects with AbortError and the next job runs on a fresh worker', async () => {
    const big = [1, 2, 3, 4].map((seed) =>
      randomAdapter({ seed, rank: 16, shapes: [{ layer: 0, module: 'q', dIn: 2048, dOut: 2048 }] }),
    );
    const ctl = new AbortController();
    const slow = worker.run('merge', { method: 'svd', adapters: big, weights, rank: 8 }, { signal: ctl.signal });
    const queued = worker.run('merge', { method: 'cat', adapters: adapters(), weights }, { signal: ctl.signal });
    const after = worker.run('details', { adapter: adapters()[0]!, count: 2 });
    ctl.abort();
    await expect(slow).rejects.toMatchObject({ name: 'AbortError', message: 'adapter algebra merge cancelled' });
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    expect((await after).norms.perTarget).toHaveLength(SHAPES.length);
    await expect(
      worker.run('details', { adapter: adapters()[0]!, count: 2 }, { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a worker that dies mid-job fails that job with a clear message; the next job starts a new one', async () => {
    // A real worker script that exits on its second message: the client must see the exit.
    const dir = mkdtempSync(join(tmpdir(), 'algebra-crash-'));
    const file = join(dir, 'crash.mjs');
    writeFileSync(
      file,
      "import { parentPort } from 'node:worker_threads';\n" +
        "let n = 0; parentPort.on('message', ({ id }) => { if (++n === 2) process.exit(7); parentPort.postMessage({ id, ok: true, value: n }); });\n",
    );
    const crashy = new AlgebraWorker({ file });
    try {
      const arg = { adapter: adapters()[0]!, count: 1 };
      expect(await crashy.run('details', arg)).toBe(1);
      await expect(crashy.run('details', arg)).rejects.toThrow(
        'adapter algebra worker exited with code 7 while running details',
      );
      expect(await crashy.run('details', arg)).toBe(1); // a fresh worker
    } finally {
      await crashy.dispose();
    }
    await expect(crashy.run('details', { adapter: adapters()[0]!, count: 1 })).rejects.toThrow(/disposed/);
  });

  it('an unknown op is an error naming it', async () => {
    const run = worker.run.bind(worker) as (op: string, arg: unknown) => Promise<unknown>;
    await expect(run('nope', {})).rejects.toThrow(
      'adapter algebra nope failed in the worker: unknown adapter algebra op "nope"',
    );
  });
});
