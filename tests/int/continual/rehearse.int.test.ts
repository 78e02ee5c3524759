// A merge run that rehearses (docs/distill.md "Rehearsing lessons into the global adapter"), on the
// default bundle (the fixtures' tokenizers cannot fit a SkillWorld question in a train-step bucket):
// after each EMA step, one distillation over every lesson so far, each lesson's practice with its own
// text in context, starting from the EMA step's adapter; its result is the version stored, and the
// version's recipe says how it was rehearsed.
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { emaStep } from '../../../main/adapters/ema';
import { RUNS_DIR, RunWorkspace } from '../../../main/api/services/run-workspace';
import { sharedEngine } from '../../../main/engine/engine-client';
import { APP_ROOT } from '../../../main/paths';
import { encodeAdapter, sha256Hex } from '../../../main/store/adapter-tensors';
import { memory, studioSuite } from '../api/transports';

const DEFAULT_BUNDLE = join(APP_ROOT, 'resources/bundles/default');
const RUN = {
  suite: 'skillworld',
  episodes: 2,
  seed: 0,
  demos: 2,
  tasks: 1,
  maxTokens: 4,
  tier: 'distilled',
  steps: 1,
  variants: 1,
  rehearse: 2,
  mode: 'merge',
} as const;

const s = studioSuite(memory, 'pskills-rehearse-', { defaultBundleDir: DEFAULT_BUNDLE });
let ws: RunWorkspace | undefined;
const parts = vi.spyOn(sharedEngine(), 'distillParts');

afterAll(() => {
  ws?.close();
  parts.mockRestore();
});

describe('continual merge with rehearsal', () => {
  it('stores the rehearsed EMA step, rehearsed over every lesson so far with its own text', async () => {
    const r = await s.api.continual.run(RUN).result;
    expect(r.settings).toMatchObject({ rehearse: 2, variants: 1, steps: 1 });
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2]);
    ws = RunWorkspace.open(join(s.dataDir, RUNS_DIR), r.run, s.studio.engine);
    const bundleId = (await ws.bundles.current()).rowId;
    const versions = [...ws.repo.globalHistory(bundleId)].sort((a, b) => a.n - b.n);
    const lessons = r.episodes.map((e) => ws!.lib.distiller.latestDistilled(e.lesson!, bundleId)!);

    // Four distillations: lesson 1, rehearsal 1, lesson 2, rehearsal 2 (one part per lesson so far).
    const calls = parts.mock.calls.map(([, key, p, o]) => ({
      key,
      n: p.length,
      steps: o?.steps,
      texts: p.map((x) => x.skill),
    }));
    expect(calls.map((c) => [c.n, c.steps])).toEqual([
      [1, 1],
      [1, 2],
      [1, 1],
      [2, 2],
    ]);
    const texts = r.episodes.map(
      (e) => ws!.lib.compiler.skill({ name: e.lesson!.name, version: e.lesson!.version }).content,
    );
    expect(calls[3]!.texts).toEqual(texts);
    // Each lesson is rehearsed on what it practised on when it was distilled.
    const practice = (call: number, part: number) => parts.mock.calls[call]![2][part]!.questions;
    expect(practice(3, 0)).toEqual(practice(0, 0));
    expect(practice(3, 1)).toEqual(practice(2, 0));

    const v2 = ws.repo.get(versions.at(-1)!.adapterRowId)!;
    expect(v2.recipe).toMatchObject({ kind: 'ema', rehearsal: { steps: 2, lessons: lessons.map((l) => l.key) } });
    // What is stored is the rehearsal's result, not the EMA step it started from.
    const ema = emaStep(ws.repo.load(versions[0]!.adapterRowId), ws.repo.load(lessons[1]!.rowId), 0.1, 16);
    // It started from that EMA step (the worker's, the same tensors as in this thread) and stored its own.
    const init = parts.mock.calls[3]![3]!.init!;
    expect(init.rank).toBe(ema.rank);
    for (const [key, p] of ema.targets) expect(Array.from(init.targets.get(key)!.B)).toEqual(Array.from(p.B));
    expect(versions.at(-1)!.adapterTensorsSha256).not.toBe(sha256Hex(encodeAdapter(ema)));
    expect(v2.rank).toBe(12);
  });
});
