// The Continual page's state (renderer/src/lib/continual/continual-run.ts) over the in-memory transport against
// the real services and the bundle-hyper fixture: a 2-episode merge run streams progress and a pass
// rate per episode, and names the global versions it wrote (the same ema.history shows); a bad form
// is refused unsent; cancel ends the run as cancelled, and Resume finishes a stopped one.
import { describe, expect, it } from 'vitest';
import {
  ContinualRunner,
  DEFAULT_FORM,
  globalVersions,
  type ContinualForm,
  type ContinualSnapshot,
} from '../../../renderer/src/lib/continual/continual-run';
import { HYPER_BUNDLE } from '../compile/fixture';
import { memory, studioSuite } from '../api/transports';

// The fixture has a hypernetwork and no train-step graph: lessons compile instantly.
const FORM: ContinualForm = {
  ...DEFAULT_FORM,
  episodes: 2,
  seed: 0,
  demos: 2,
  tasks: 2,
  maxTokens: 8,
  tier: 'instant',
};

const suite = studioSuite(memory, 'pskills-continual-page-', { defaultBundleDir: HYPER_BUNDLE });

describe('the Continual page state', () => {
  it('merge: progress per episode, a pass rate after each, the global versions it wrote', async () => {
    const snaps: ContinualSnapshot[] = [];
    let ended = 0;
    const runner = new ContinualRunner(
      suite.api,
      (s) => snaps.push(s),
      () => ended++,
    );
    expect(await runner.start({ ...FORM, mode: 'merge' })).toBe(true);
    const s = runner.snapshot;
    expect(s.status).toBe('done');
    expect(ended).toBe(1);
    expect(s.points.map((p) => p.episode)).toEqual([1, 2]);
    expect(s.points.map((p) => p.globalVersion)).toEqual([1, 2]);
    expect(s.result!.episodes.map((e) => e.passRate)).toEqual(s.points.map((p) => p.passRate));
    expect(s.lessons.map((l) => l.episode)).toEqual([1, 2]);
    expect(snaps.some((x) => x.progress?.phase === 'lesson' && x.progress.episodes === 2)).toBe(true);
    expect(snaps.some((x) => x.progress?.phase === 'measure')).toBe(true);

    const detail = await suite.api.continual.get({ run: s.run! });
    expect(globalVersions(s.points)).toEqual([
      { episode: 1, version: 1 },
      { episode: 2, version: 2 },
    ]);
    expect(detail.globals.map((v) => v.version)).toEqual([1, 2]);
    expect(s.result!.episodes[1]!.adapter).toBe(detail.globals[1]!.adapter);
    // The run's workspace holds it all; the Library's timeline is untouched.
    expect((await suite.api.ema.history({})).versions).toEqual([]);
  });

  it('independent writes no global version', async () => {
    const runner = new ContinualRunner(suite.api, () => {});
    await runner.start({ ...FORM, mode: 'independent' });
    expect(runner.snapshot.status).toBe('done');
    expect(globalVersions(runner.snapshot.points)).toEqual([]);
    expect((await suite.api.ema.history({})).versions).toHaveLength(0);
  });

  it('refuses a bad form unsent, naming the field', async () => {
    const runner = new ContinualRunner(suite.api, () => {});
    expect(await runner.start({ ...FORM, episodes: 0 })).toBe(false);
    expect(runner.snapshot.status).toBe('idle');
    expect(runner.snapshot.problems).toEqual([expect.stringMatching(/^Episodes must be at least 1/)]);
  });

  it('the service refusal shows as the run failing (more episodes than worlds)', async () => {
    const runner = new ContinualRunner(suite.api, () => {});
    await runner.start({ ...FORM, episodes: 33 });
    expect(runner.snapshot.status).toBe('failed');
    expect(runner.snapshot.error!.message).toMatch(/33 asked, the suite has 32 worlds/);
  });

  it('cancel ends the run as cancelled', async () => {
    const runner = new ContinualRunner(suite.api, () => {});
    const done = runner.start({ ...FORM, mode: 'cat' });
    runner.cancel();
    expect(runner.snapshot.cancelling).toBe(true);
    await done;
    expect(runner.snapshot).toMatchObject({ status: 'cancelled', cancelling: false, result: null });
  });

  it('a run cancelled after its first measurement resumes to the end, each lesson absorbed once', async () => {
    const before = 0; // a new run's workspace starts with no global adapter
    let runner: ContinualRunner | null = null;
    let cancelled = false;
    runner = new ContinualRunner(suite.api, (s) => {
      if (cancelled || s.status !== 'running' || s.points.length !== 1) return;
      cancelled = true;
      runner?.cancel();
    });
    await runner.start({ ...FORM, mode: 'merge' });
    const stopped = runner.snapshot;
    expect(stopped.status).toBe('cancelled');
    expect(stopped.run).toMatch(/^[0-9a-f]{12}$/);
    expect(stopped.points.map((p) => p.episode)).toEqual([1]);

    expect(await runner.resume()).toBe(true);
    const s = runner.snapshot;
    expect(s.status).toBe('done');
    expect(s.result!.run).toBe(stopped.run);
    expect(s.points.map((p) => p.episode)).toEqual([1, 2]);
    expect(s.points.map((p) => p.globalVersion)).toEqual([before + 1, before + 2]);
    expect((await suite.api.continual.get({ run: s.run! })).globals).toHaveLength(2);
    expect(await runner.resume()).toBe(false); // a finished run has nothing left
  });
});
