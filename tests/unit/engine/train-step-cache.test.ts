// TrainStepCache on real onnxruntime sessions of the tiny train-step fixture: the least recently used
// idle session is closed beyond `max`, a busy one never is, and dispose closes them all. The fixture has
// one bucket, so entries differ by thread count (part of the cache key).
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BundleManifest } from '../../../main/engine/manifest';
import { loadBundle } from '../../../main/engine/bundle';
import {
  initState,
  TrainLoop,
  TrainStepCache,
  TrainStepGraph,
  trainStepEntry,
  type StepRunner,
} from '../../../main/engine/train-step';
import { APP_ROOT } from '../../../main/paths';

const DIR = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
let manifest: BundleManifest;

beforeAll(async () => {
  const bundle = await loadBundle(DIR, { verifyHashes: false });
  manifest = bundle.manifest;
  await bundle.dispose();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every graph disposed so far, in order (dispose is called after eviction without being awaited). */
function watchDisposed(): StepRunner[] {
  const disposed: StepRunner[] = [];
  const real = TrainStepGraph.prototype.dispose;
  vi.spyOn(TrainStepGraph.prototype, 'dispose').mockImplementation(function (this: TrainStepGraph) {
    disposed.push(this);
    return real.call(this);
  });
  return disposed;
}

/** One step through the graph: resolves on a live session, rejects on a released one. */
async function step(graph: StepRunner): Promise<number> {
  const loop = new TrainLoop(manifest, initState(manifest, null, 0));
  loop.buffers(graph.bucket).attentionMask.fill(1n);
  return loop.run(graph, 1, 1e-3);
}

describe('TrainStepCache', () => {
  const bucket = () => trainStepEntry(manifest).buckets[0]!;
  const opts = (threads: number) => ({ provider: 'cpu' as const, intraOpNumThreads: threads, logger: () => undefined });

  it('closes the least recently used idle session beyond 3 and keeps the others open', async () => {
    const disposed = watchDisposed();
    const cache = new TrainStepCache(DIR, manifest);
    const graphs = new Map<number, StepRunner>();
    for (const t of [1, 2, 3]) {
      const { graph, release } = await cache.acquire(bucket(), opts(t));
      graphs.set(t, graph);
      release();
    }
    // Using 1 again makes 2 the least recently used.
    const again = await cache.acquire(bucket(), opts(1));
    expect(again.graph).toBe(graphs.get(1));
    again.release();
    const fourth = await cache.acquire(bucket(), opts(4));
    fourth.release();
    await vi.waitFor(() => expect(disposed).toEqual([graphs.get(2)]));
    await expect(step(graphs.get(2)!)).rejects.toThrow();
    for (const t of [1, 3]) expect(Number.isFinite(await step(graphs.get(t)!))).toBe(true);
    // The kept ones come back as they are; the evicted one is opened anew.
    const one = await cache.acquire(bucket(), opts(1));
    expect(one.graph).toBe(graphs.get(1));
    one.release();
    const two = await cache.acquire(bucket(), opts(2));
    expect(two.graph).not.toBe(graphs.get(2));
    two.release();
    await cache.dispose();
  });

  it('never closes a session in use: the next idle one goes instead, or the busy one when released', async () => {
    const disposed = watchDisposed();
    const cache = new TrainStepCache(DIR, manifest);
    const held = await cache.acquire(bucket(), opts(1)); // the least recently used, but busy
    const graphs = new Map<number, StepRunner>();
    for (const t of [2, 3, 4]) {
      const { graph, release } = await cache.acquire(bucket(), opts(t));
      graphs.set(t, graph);
      release();
    }
    await vi.waitFor(() => expect(disposed).toEqual([graphs.get(2)]));
    expect(Number.isFinite(await step(held.graph))).toBe(true);
    // Four busy at once: over the limit until one is released, then that one (the oldest) goes.
    const busy = [held, ...(await Promise.all([3, 4, 5].map((t) => cache.acquire(bucket(), opts(t)))))];
    await new Promise((r) => setTimeout(r, 20));
    expect(disposed).toHaveLength(1);
    held.release();
    await vi.waitFor(() => expect(disposed).toEqual([graphs.get(2), held.graph]));
    for (const b of busy.slice(1)) b.release();
    await new Promise((r) => setTimeout(r, 20));
    expect(disposed).toHaveLength(2);
    await cache.dispose();
    expect(disposed).toHaveLength(5);
  });

  it('dispose closes every idle session, a busy one when released, and later ones after use', async () => {
    const disposed = watchDisposed();
    const cache = new TrainStepCache(DIR, manifest);
    const idle: StepRunner[] = [];
    for (const t of [1, 2]) {
      const { graph, release } = await cache.acquire(bucket(), opts(t));
      idle.push(graph);
      release();
    }
    const busy = await cache.acquire(bucket(), opts(3));
    await cache.dispose();
    expect(disposed).toEqual(expect.arrayContaining(idle));
    expect(disposed).toHaveLength(2);
    for (const g of idle) await expect(step(g)).rejects.toThrow();
    expect(Number.isFinite(await step(busy.graph))).toBe(true);
    busy.release();
    await vi.waitFor(() => expect(disposed).toContain(busy.graph));
    await expect(step(busy.graph)).rejects.toThrow();
    // After close nothing is kept: a session is opened for the caller and closed on release.
    const late = await cache.acquire(bucket(), opts(1));
    expect(idle).not.toContain(late.graph);
    late.release();
    await vi.waitFor(() => expect(disposed).toContain(late.graph));
  });
});
