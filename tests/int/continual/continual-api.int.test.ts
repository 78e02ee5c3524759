// continual.run against the real services, a SQLite file and the bundle-hyper fixture (random
// hypernetwork): 2 episodes in each mode, the global adapter's versions (advance, roll back), the
// stored lessons and trajectories, cancel over the web host, and the LLM summariser against a local
// OpenAI-compatible server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContinualEvent, ContinualMode, ContinualRunResult } from '../../../common/api/continual-schemas';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { createStudio, type Studio } from '../../../main/api/root';
import { AdapterCache } from '../../../main/api/services/adapter-cache';
import { AdapterService } from '../../../main/api/services/adapter-service';
import { BundleRegistry } from '../../../main/api/services/bundle-registry';
import { CompileService } from '../../../main/api/services/compile-service';
import { ContinualService } from '../../../main/api/services/continual-service';
import { EngineService } from '../../../main/api/services/engine-service';
import { TrajectoryService } from '../../../main/api/services/trajectory-service';
import { memoryPair } from '../../../main/api/transports/memory';
import { AdaptersRepo } from '../../../main/store/adapters-repo';
import { ContinualRepo } from '../../../main/store/continual-repo';
import { openDatabase } from '../../../main/store/db';
import { SettingsRepo } from '../../../main/store/settings-repo';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { TrajectoriesRepo } from '../../../main/store/trajectories-repo';
import { failure, transports } from '../api/transports';
import { HYPER_BUNDLE } from '../compile/fixture';

const RUN = { suite: 'skillworld', episodes: 2, seed: 0, demos: 2, tasks: 2, maxTokens: 8 } as const;

let dataDir: string;
let studio: Studio;
let api: StudioApi;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-continual-'));
  studio = createStudio({ dataDir, defaultBundleDir: HYPER_BUNDLE });
  api = memoryPair(studioContract, studio.dispatcher).api;
});
afterAll(async () => {
  await studio.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

async function run(mode: ContinualMode, events: ContinualEvent[] = []): Promise<ContinualRunResult> {
  return api.continual.run({ ...RUN, mode }, (e) => events.push(e)).result;
}

describe('continual.run, 2 episodes per mode', () => {
  it('merge: each lesson is an EMA step of the global adapter; rollback restores an earlier version', async () => {
    const events: ContinualEvent[] = [];
    const r = await run('merge', events);
    expect(r.mode).toBe('merge');
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2]);
    expect(r.episodes.map((e) => e.n)).toEqual([2, 4]); // the held-out tasks of every lesson so far
    for (const e of r.episodes) {
      expect(e.passRate).toBeGreaterThanOrEqual(0);
      expect(e.passRate).toBeLessThanOrEqual(1);
      expect(e.passRate).toBe(e.passed / e.n);
    }
    expect(r.finalPassRate).toBe(r.episodes[1]!.passRate);
    expect(events.filter((e) => e.type === 'measured').map((e) => e.episode)).toEqual([1, 2]);

    const history = await api.ema.history({});
    const [v2, v1] = history.versions;
    expect([v2!.version, v1!.version]).toEqual([2, 1]);
    expect(v2!.beta).toBe(0.1);
    expect(v2!.rank).toBeLessThanOrEqual(16);
    expect(r.episodes[1]!.adapter).toBe(v2!.adapter);

    const back = await api.ema.rollback({ version: 1 });
    expect(back).toMatchObject({ version: 3, kind: 'rollback', restoresVersion: 1, adapter: v1!.adapter });
  });

  it('stores each lesson as a skill version (provenance lesson) made from stored, verified trajectories', async () => {
    const r = await run('independent');
    const lesson = r.episodes[0]!.lesson!;
    const skill = await api.skills.get(lesson);
    const p = skill.version.provenance;
    expect(p).toMatchObject({ kind: 'lesson', episode: 1, world: r.episodes[0]!.world, summariser: 'template' });
    expect(skill.content).toMatch(/^---\nname: lesson-/);
    if (p.kind !== 'lesson') throw new Error('not a lesson');
    expect(p.trajectories).toHaveLength(RUN.demos);
    for (const id of p.trajectories) {
      const t = await api.trajectories.show({ id });
      expect(t.source).toBe('synth');
      expect(t.verdict?.passed).toBe(true);
      expect(t.messages.at(-1)!.role).toBe('assistant');
    }
  });

  it.each(['cat', 'linear'] as const)('%s: each episode appends the mean of the lessons so far', async (mode) => {
    const before = (await api.ema.history({})).versions[0]?.version ?? 0;
    const r = await run(mode);
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([before + 1, before + 2]);
    const [head] = (await api.ema.history({})).versions;
    expect(head!.beta).toBe(0.5); // the newest of two lessons weighs 1/2
    const detail = await api.adapters.get({ id: head!.adapter });
    expect(detail.recipe).toMatchObject({ kind: 'merge', method: mode, weights: [0.5, 0.5] });
    expect(detail.lineage).toHaveLength(2);
  });

  it.each(['independent', 'in_context'] as const)('%s: leaves the global adapter alone', async (mode) => {
    const before = (await api.ema.history({})).versions.length;
    const r = await run(mode);
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([null, null]);
    expect(r.episodes.map((e) => e.n)).toEqual([2, 4]);
    expect(r.episodes[1]!.adapter).toEqual(mode === 'independent' ? expect.any(String) : null);
    expect((await api.ema.history({})).versions).toHaveLength(before);
  });

  it('refuses more episodes than the suite has worlds, and a missing world folder', async () => {
    const e = await failure(api.continual.run({ ...RUN, episodes: 33, mode: 'merge' }).result);
    expect(e.code).toBe('invalid_input');
    expect(e.message).toMatch(/33 asked, the suite has 32 worlds/);
    const m = await failure(api.continual.run({ ...RUN, mode: 'merge', world: join(dataDir, 'nope') }).result);
    expect(m.code).toBe('not_found');
    expect(m.message).toMatch(/not a SkillWorld folder/);
  });
});

describe('cancel over the web host, then resume', () => {
  let run = '';
  let before = 0;
  it('stops after the episode it is in; finished episodes stay whole and the database is intact', async () => {
    const web = transports.find((t) => t.name === 'web host')!;
    const { api: remote, close } = await web.open(studio);
    try {
      before = (await remote.ema.history({})).versions[0]?.version ?? 0;
      const handle = remote.continual.run({ ...RUN, episodes: 3, seed: 7, mode: 'merge' }, (e) => {
        if (e.type === 'run') run = e.run;
        if (e.type === 'measured' && e.episode === 1) handle.cancel();
      });
      const err = await failure(handle.result);
      expect(err.code).toBe('cancelled');
      const head = (await remote.ema.history({})).versions[0]!.version;
      expect(head - before).toBeGreaterThanOrEqual(1);
      expect(head - before).toBeLessThan(3);
    } finally {
      await close();
    }
    const db = new Database(join(dataDir, 'studio.db'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('continual.resume goes on from the stored episodes: no lesson absorbed twice', async () => {
    const events: ContinualEvent[] = [];
    const r = await api.continual.resume({ run }, (e) => events.push(e)).result;
    expect(events[0]).toMatchObject({ type: 'run', run, resumed: true, done: expect.any(Number) });
    expect(r.run).toBe(run);
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([before + 1, before + 2, before + 3]);
    expect((await api.ema.history({})).versions[0]!.version).toBe(before + 3);
    // Episodes measured before the cancel are read back, not played again.
    const played = events.filter((e) => e.type === 'episode').map((e) => e.episode);
    expect(played).not.toContain(1);
    const again = await api.continual.resume({ run }).result;
    expect(again.episodes).toEqual(r.episodes);
    const missing = await failure(api.continual.resume({ run: '0123456789ab' }).result);
    expect(missing.code).toBe('not_found');
  });
});

describe('the LLM summariser', () => {
  let server: Server;
  let url: string;
  let reply: { status: number; body: unknown } = { status: 200, body: {} };
  const asked: unknown[] = [];
  let db: ReturnType<typeof openDatabase>;
  let service: (settings: Record<string, unknown>) => ContinualService;
  let engine: EngineService;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        asked.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) as unknown });
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    db = openDatabase(':memory:');
    const skills = new SkillsRepo(db);
    engine = new EngineService({ defaultBundleDir: HYPER_BUNDLE });
    const repo = new AdaptersRepo(db, mkdtempSync(join(tmpdir(), 'pskills-continual-llm-')));
    const bundles = new BundleRegistry(engine, repo);
    const cache = new AdapterCache(repo);
    const trajectories = new TrajectoryService(new TrajectoriesRepo(db), skills, new SettingsRepo(db));
    const deps = {
      bundles,
      skills,
      compiler: new CompileService(skills, repo, bundles, cache),
      adapters: new AdapterService(repo, bundles, cache),
      repo,
      cache,
      trajectories,
      store: new ContinualRepo(db),
    };
    service = (settings) => new ContinualService(deps, () => settings);
  });
  afterAll(async () => {
    await engine.dispose();
    db.close();
    await new Promise((done) => server.close(done));
  });

  const once = (s: ContinualService, summariser?: 'llm' | 'template', events: ContinualEvent[] = []) =>
    s.run(
      { ...RUN, episodes: 1, mode: 'independent', ...(summariser && { summariser }) },
      { emit: (e) => events.push(e), signal: new AbortController().signal },
    );

  it('asks the configured endpoint and stores its lesson, renamed to lesson-<world>', async () => {
    const lesson =
      '---\nname: whatever\ndescription: Reply with the codeword first.\n---\n\n# Lesson\n\n- Start with the codeword.\n';
    reply = {
      status: 200,
      body: { choices: [{ message: { content: `Here it is:\n\n\`\`\`markdown\n${lesson}\`\`\`\n` } }] },
    };
    const r = await once(service({ llmBaseUrl: url, llmModel: 'tiny', llmApiKey: 'k1' }));
    expect(r.settings.summariser).toBe('llm tiny');
    const last = asked.at(-1) as {
      url: string;
      auth: string;
      body: { model: string; messages: { content: string }[] };
    };
    expect(last.url).toBe('/v1/chat/completions');
    expect(last.auth).toBe('Bearer k1');
    expect(last.body.model).toBe('tiny');
    expect(last.body.messages[1]!.content).toMatch(/^Conversation 1:\nuser: /);
    expect(r.episodes[0]!.lesson!.name).toMatch(/^lesson-/);
  });

  it('falls back to the template with a warning when the endpoint fails and none was asked for by name', async () => {
    reply = { status: 500, body: { error: { message: 'model not loaded' } } };
    const events: ContinualEvent[] = [];
    const r = await once(service({ llmBaseUrl: url, llmModel: 'tiny' }), undefined, events);
    expect(r.settings.summariser).toBe('llm tiny, template after a failure');
    expect(events.find((e) => e.type === 'warning')).toMatchObject({
      message: expect.stringMatching(/model not loaded/),
    });
  });

  it("reads the endpoint from the studio's settings (settings.set llmBaseUrl, llmModel)", async () => {
    const lesson = '---\nname: x\ndescription: Start with the codeword.\n---\n\n# Lesson\n\n- Start with it.\n';
    reply = { status: 200, body: { choices: [{ message: { content: '```markdown\n' + lesson + '```' } }] } };
    await api.settings.set({ llmBaseUrl: url, llmModel: 'tiny' });
    try {
      const r = await api.continual.run({ ...RUN, episodes: 1, seed: 11, mode: 'independent' }).result;
      expect(r.settings.summariser).toBe('llm tiny');
      const skill = await api.skills.get(r.episodes[0]!.lesson!);
      expect(skill.content).toContain('- Start with it.');
    } finally {
      await api.settings.set({ llmBaseUrl: null, llmModel: null });
    }
  });

  it('fails the run when summariser "llm" was asked for and the endpoint fails, or none is configured', async () => {
    reply = { status: 500, body: { error: { message: 'model not loaded' } } };
    await expect(once(service({ llmBaseUrl: url, llmModel: 'tiny' }), 'llm')).rejects.toThrow(
      /chat\/completions: HTTP 500: model not loaded/,
    );
    await expect(once(service({}), 'llm')).rejects.toThrow(/no endpoint is configured/);
    expect((await once(service({}))).settings.summariser).toBe('template');
  });
});
