// The Library's "Compile selected" runner (renderer/src/lib/skills/batch-compile.ts) over the in-memory
// transport against the real services and the bundle-hyper fixture: one compile at a time, per-skill
// progress and outcome, a failing skill does not stop the others, a second run finds the stored
// adapters, and Cancel stops the running compile (storing nothing) and skips the rest.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  batchCounts,
  batchFraction,
  BatchCompiler,
  type BatchSnapshot,
} from '../../../renderer/src/lib/skills/batch-compile';
import { HYPER_BUNDLE, SKILLS } from '../compile/fixture';
import { memory, studioSuite } from './transports';

describe('BatchCompiler over the in-memory transport', () => {
  const suite = studioSuite(memory, 'pskills-batch-', { defaultBundleDir: HYPER_BUNDLE });
  beforeAll(async () => {
    for (const [name, content] of Object.entries(SKILLS)) await suite.api.skills.save({ name, content });
  });

  it('compiles each skill in turn with progress; a missing skill fails alone', async () => {
    const snapshots: BatchSnapshot[] = [];
    let compiledCalls = 0;
    const batch = new BatchCompiler(
      suite.api,
      (s) => snapshots.push(s),
      () => compiledCalls++,
    );
    await batch.start(['review-branch', 'no-such-skill', 'sql-review']);
    const last = snapshots.at(-1)!;
    expect(last.running).toBe(false);
    expect(last.items.map((i) => [i.name, i.status])).toEqual([
      ['review-branch', 'done'],
      ['no-such-skill', 'failed'],
      ['sql-review', 'done'],
    ]);
    expect(last.items[1]!.error).toMatchObject({ code: 'not_found' });
    expect(batchCounts(last.items)).toEqual({ done: 2, cached: 0, failed: 1, cancelled: 0, queued: 0, total: 3 });
    expect(batchFraction(last.items)).toBe(1);
    expect(compiledCalls).toBe(1);
    // One at a time, in order: never two running; chunk progress seen while each ran.
    expect(snapshots.every((s) => s.items.filter((i) => i.status === 'running').length <= 1)).toBe(true);
    const firstDone = snapshots.findIndex((s) => s.items[0]!.status === 'done');
    expect(snapshots.slice(0, firstDone).every((s) => s.items[2]!.status === 'queued')).toBe(true);
    expect(snapshots.some((s) => s.items[0]!.status === 'running' && (s.items[0]!.progress?.chunk ?? 0) > 0)).toBe(
      true,
    );
    const adapters = await suite.api.adapters.list({});
    for (const item of last.items.filter((i) => i.status === 'done')) {
      expect(adapters.find((a) => a.id === item.result!.adapterId)?.skill).toMatchObject({
        name: item.name,
        version: 1,
      });
    }
  });

  it('a second run finds the stored adapters (no new adapter, no onCompiled)', async () => {
    let snapshot: BatchSnapshot | null = null;
    let compiledCalls = 0;
    const batch = new BatchCompiler(
      suite.api,
      (s) => (snapshot = s),
      () => compiledCalls++,
    );
    await batch.start(['review-branch', 'sql-review']);
    expect(snapshot!.items.map((i) => i.result?.cached)).toEqual([true, true]);
    expect(batchCounts(snapshot!.items)).toMatchObject({ done: 2, cached: 2 });
    expect(compiledCalls).toBe(0);
  });

  it('Cancel stops the running compile, stores nothing for it and skips the rest', async () => {
    const before = (await suite.api.adapters.list({})).length;
    let snapshot: BatchSnapshot | null = null;
    let cancelled = false;
    const batch = new BatchCompiler(suite.api, (s) => {
      snapshot = s;
      // long-notes has ~50 chunks: cancel once it is under way.
      const running = s.items.find((i) => i.status === 'running');
      if (!cancelled && running?.name === 'long-notes' && (running.progress?.chunk ?? 0) >= 2) {
        cancelled = true;
        batch.cancel();
      }
    });
    await batch.start(['long-notes', 'review-branch']);
    expect(cancelled).toBe(true);
    expect(snapshot!.items.map((i) => i.status)).toEqual(['cancelled', 'cancelled']);
    expect(snapshot!.running).toBe(false);
    expect((await suite.api.adapters.list({})).length).toBe(before);
  });

  it('ignores a second start while one runs', async () => {
    let snapshot: BatchSnapshot | null = null;
    const batch = new BatchCompiler(suite.api, (s) => (snapshot = s));
    const first = batch.start(['sql-review']);
    expect(batch.busy).toBe(true);
    await batch.start(['review-branch']);
    await first;
    expect(snapshot!.items.map((i) => i.name)).toEqual(['sql-review']);
  });
});
