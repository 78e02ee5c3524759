// continual.run against the real services, a SQLite file and the bundle-hyper fixture (random
// hypernetwork): 2 episodes in each mode, the global adapter's versions (advance, roll back), the
// stored lessons and trajectories, cancel over the web host, and the LLM summariser against a local
// OpenAI-compatible server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContinualEvent, ContinualMode, ContinualRunResult } from '../../../common/api/continual-schemas';
import type { Settings } from '../../../common/api/trajectory-schemas';
import { failure, memory, studioSuite, transports } from '../api/transports';
import { HYPER_BUNDLE } from '../compile/fixture';

const RUN = { suite: 'skillworld', episodes: 2, seed: 0, demos: 2, tasks: 2, maxTokens: 8, tier: 'instant' } as const;

const s = studioSuite(memory, 'pskills-continual-', { defaultBundleDir: HYPER_BUNDLE });

async function run(mode: ContinualMode, events: ContinualEvent[] = []): Promise<ContinualRunResult> {
  return s.api.continual.run({ ...RUN, mode }, (e) => events.push(e)).result;
}

/** The tables the Library keeps, dumped whole: a run must leave them as they were. */
function library(): string {
  const db = new Database(join(s.dataDir, 'studio.db'), { readonly: true });
  try {
    return ['skills', 'skill_versions', 'adapters', 'adapter_parents', 'global_adapter_versions', 'trajectories']
      .map((t) => JSON.stringify(db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()))
      .join('\n');
  } finally {
    db.close();
  }
}

describe('continual.run, 2 episodes per mode, each in its own workspace', () => {
  let untouched = '';
  beforeAll(async () => {
    await s.api.skills.list({}); // the Library exists before any run
    untouched = library();
  });

  it("merge: each lesson is an EMA step of the run's own global adapter; the Library is untouched", async () => {
    const events: ContinualEvent[] = [];
    const r = await run('merge', events);
    expect(r.mode).toBe('merge');
    expect(r.settings.tier).toBe('instant');
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2]);
    expect(r.episodes.map((e) => e.n)).toEqual([2, 4]); // the held-out tasks of every lesson so far
    for (const e of r.episodes) expect(e.passRate).toBe(e.passed / e.n);
    expect(r.finalPassRate).toBe(r.episodes[1]!.passRate);
    expect(events.filter((e) => e.type === 'measured').map((e) => e.episode)).toEqual([1, 2]);

    const detail = await s.api.continual.get({ run: r.run });
    expect(detail.status).toBe('done');
    expect(detail.dir).toBe(join(s.dataDir, 'runs', r.run));
    expect(detail.globals.map((g) => g.version)).toEqual([1, 2]);
    expect(detail.globals[1]!.adapter).toBe(r.episodes[1]!.adapter);
    expect(detail.points.map((p) => p.passRate)).toEqual(r.episodes.map((e) => e.passRate));
    expect(detail.lessons.map((l) => l.name)).toEqual(r.episodes.map((e) => e.lesson!.name));
    expect(detail.lessons[0]!.tier).toBe('instant');
    expect(detail.lessons[0]!.text).toMatch(/^---\nname: lesson-/);

    expect((await s.api.ema.history({})).versions).toEqual([]);
    expect(await s.api.skills.list({})).toEqual([]);
    expect(library()).toBe(untouched); // byte for byte
  });

  it.each(['cat', 'linear', 'independent', 'in_context'] as const)(
    '%s: runs in its own workspace and leaves the Library as it was',
    async (mode) => {
      const r = await run(mode);
      expect(r.episodes.map((e) => e.globalVersion)).toEqual(
        mode === 'cat' || mode === 'linear' ? [1, 2] : [null, null],
      );
      expect(r.episodes.map((e) => e.n)).toEqual([2, 4]);
      expect(library()).toBe(untouched);
    },
  );

  it('lists every run, newest first, with its curve', async () => {
    const { runs } = await s.api.continual.list({});
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(runs.every((x) => x.status === 'done' && x.points.length === 2 && x.finalPassRate !== null)).toBe(true);
  });

  it('refuses more episodes than the suite has worlds, and a missing world folder', async () => {
    const e = await failure(s.api.continual.run({ ...RUN, episodes: 33, mode: 'merge' }).result);
    expect(e.code).toBe('invalid_input');
    expect(e.message).toMatch(/33 asked, the suite has 32 worlds/);
    const m = await failure(s.api.continual.run({ ...RUN, mode: 'merge', world: join(s.dataDir, 'nope') }).result);
    expect(m.code).toBe('not_found');
    expect(m.message).toMatch(/not a SkillWorld folder/);
    // Each failed run is listed with its reason.
    const failed = (await s.api.continual.list({})).runs.filter((x) => x.status === 'failed');
    expect(failed.map((x) => x.error)).toEqual(
      expect.arrayContaining([expect.stringMatching(/33 asked/), expect.stringMatching(/not a SkillWorld folder/)]),
    );
  });
});

describe('adopt and delete', () => {
  let runId = '';
  it('adopts a lesson as a new Library skill with its adapter and provenance', async () => {
    const r = await run('merge');
    runId = r.run;
    const a = await s.api.continual.adopt({ run: runId, what: 'lesson', episode: 1 });
    expect(a).toMatchObject({ kind: 'lesson', version: 1, run: runId, episode: 1 });
    expect(a.name).toBe(r.episodes[0]!.lesson!.name);
    const skill = await s.api.skills.get({ name: a.name });
    expect(skill.version.provenance).toMatchObject({ kind: 'lesson', run: runId, episode: 1, adoptedFrom: a.from });
    const adapter = await s.api.adapters.get({ id: a.adapter });
    expect(adapter.skill).toMatchObject({ name: a.name, version: 1 });
  });

  it('a lesson whose name exists is refused, naming the field; nothing is overwritten; a new name works', async () => {
    const before = library();
    const e = await failure(s.api.continual.adopt({ run: runId, what: 'lesson', episode: 1 }));
    expect(e.code).toBe('conflict');
    expect(e.message).toMatch(/^name: a skill named "lesson-.*" is already in the Library; choose another name/);
    expect(library()).toBe(before);
    const b = await s.api.continual.adopt({ run: runId, what: 'lesson', episode: 1, name: 'my-lesson' });
    expect(b).toMatchObject({ name: 'my-lesson', version: 1 });
    expect((await s.api.skills.get({ name: 'my-lesson' })).content).toMatch(/^---\nname: my-lesson\n/);
  });

  it("adopts the run's global adapter under a name, versioned; the Library's global timeline stays", async () => {
    const g1 = await s.api.continual.adopt({ run: runId, what: 'global', episode: 1 });
    const g2 = await s.api.continual.adopt({ run: runId, what: 'global' });
    expect([g1.name, g1.version, g1.from]).toEqual([`global-${runId}`, 1, 'global v1']);
    expect([g2.version, g2.from]).toEqual([2, 'global v2']);
    expect((await s.api.adapters.get({ id: g2.adapter })).recipe.kind).toBe('import');
    expect((await s.api.ema.history({})).versions).toEqual([]);
    const { adoptions } = await s.api.continual.adoptions({});
    expect(adoptions.map((x) => `${x.name}@${x.version}`).slice(0, 2)).toEqual([
      `global-${runId}@2`,
      `global-${runId}@1`,
    ]);
    const none = await failure(s.api.continual.adopt({ run: runId, what: 'lesson', episode: 9 }));
    expect(none.message).toMatch(/^episode: /);
  });

  it('a run stored as running that no process runs is listed as interrupted, with why', async () => {
    const r = await run('independent');
    const db = new Database(join(s.dataDir, 'runs', r.run, 'run.db'));
    db.prepare("UPDATE continual_runs SET status = 'running'").run();
    db.close();
    const listed = (await s.api.continual.list({})).runs.find((x) => x.run === r.run)!;
    expect(listed.status).toBe('interrupted');
    expect(listed.error).toMatch(/Resume goes on/);
    expect((await s.api.continual.resume({ run: r.run }).result).episodes).toHaveLength(2);
    expect((await s.api.continual.get({ run: r.run })).status).toBe('done');
  });

  it('deleting a run removes its workspace and nothing else', async () => {
    const before = library();
    expect(await s.api.continual.delete({ run: runId })).toEqual({ run: runId, deleted: true });
    expect(existsSync(join(s.dataDir, 'runs', runId))).toBe(false);
    expect(library()).toBe(before);
    expect((await s.api.skills.get({ name: 'my-lesson' })).name).toBe('my-lesson'); // adopted copies stay
    expect((await failure(s.api.continual.get({ run: runId }))).code).toBe('not_found');
  });
});

describe('cancel over the web host, then resume', () => {
  let run = '';
  it('stops after the episode it is in; finished episodes stay whole and the database is intact', async () => {
    const web = transports.find((t) => t.name === 'web host')!;
    const { api: remote, close } = await web.open(s.studio, s.dataDir);
    try {
      const handle = remote.continual.run({ ...RUN, episodes: 3, seed: 7, mode: 'merge' }, (e) => {
        if (e.type === 'run') run = e.run;
        if (e.type === 'measured' && e.episode === 1) handle.cancel();
      });
      const err = await failure(handle.result);
      expect(err.code).toBe('cancelled');
      const d = await remote.continual.get({ run });
      expect(d.status).toBe('cancelled');
      expect(d.globals.length).toBeGreaterThanOrEqual(1);
      expect(d.globals.length).toBeLessThan(3);
    } finally {
      await close();
    }
    const db = new Database(join(s.dataDir, 'runs', run, 'run.db'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('continual.resume goes on from the stored episodes: no lesson absorbed twice', async () => {
    const events: ContinualEvent[] = [];
    const r = await s.api.continual.resume({ run }, (e) => events.push(e)).result;
    expect(events[0]).toMatchObject({ type: 'run', run, resumed: true, done: expect.any(Number) });
    expect(r.run).toBe(run);
    expect(r.episodes.map((e) => e.globalVersion)).toEqual([1, 2, 3]);
    // Episodes measured before the cancel are read back, not played again.
    const played = events.filter((e) => e.type === 'episode').map((e) => e.episode);
    expect(played).not.toContain(1);
    const again = await s.api.continual.resume({ run }).result;
    expect(again.episodes).toEqual(r.episodes);
    const missing = await failure(s.api.continual.resume({ run: '0123456789ab' }).result);
    expect(missing.code).toBe('not_found');
  });
});

describe('the LLM summariser', () => {
  let server: Server;
  let url: string;
  let reply: { status: number; body: unknown } = { status: 200, body: {} };
  const asked: unknown[] = [];
  // A studio of its own: each run below under the settings it names, the others unset.
  const llm = studioSuite(memory, 'pskills-continual-llm-', { defaultBundleDir: HYPER_BUNDLE });

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
  });
  afterAll(() => new Promise((done) => server.close(done)));

  const once = async (settings: Partial<Settings>, summariser?: 'llm' | 'template', events: ContinualEvent[] = []) => {
    await llm.api.settings.set({ llmBaseUrl: null, llmModel: null, llmApiKey: null, ...settings });
    const run = { ...RUN, episodes: 1, mode: 'independent', ...(summariser && { summariser }) } as const;
    return llm.api.continual.run(run, (e) => events.push(e)).result;
  };

  it('asks the configured endpoint and stores its lesson, renamed to lesson-<world>', async () => {
    const lesson =
      '---\nname: whatever\ndescription: Reply with the codeword first.\n---\n\n# Lesson\n\n- Start with the codeword.\n';
    reply = {
      status: 200,
      body: { choices: [{ message: { content: `Here it is:\n\n\`\`\`markdown\n${lesson}\`\`\`\n` } }] },
    };
    const r = await once({ llmBaseUrl: url, llmModel: 'tiny', llmApiKey: 'k1' });
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
    const r = await once({ llmBaseUrl: url, llmModel: 'tiny' }, undefined, events);
    expect(r.settings.summariser).toBe('llm tiny, template after a failure');
    expect(events.find((e) => e.type === 'warning')).toMatchObject({
      message: expect.stringMatching(/model not loaded/),
    });
  });

  it("reads the endpoint from the studio's settings (settings.set llmBaseUrl, llmModel)", async () => {
    const lesson = '---\nname: x\ndescription: Start with the codeword.\n---\n\n# Lesson\n\n- Start with it.\n';
    reply = { status: 200, body: { choices: [{ message: { content: '```markdown\n' + lesson + '```' } }] } };
    await s.api.settings.set({ llmBaseUrl: url, llmModel: 'tiny' });
    try {
      const r = await s.api.continual.run({ ...RUN, episodes: 1, seed: 11, mode: 'independent' }).result;
      expect(r.settings.summariser).toBe('llm tiny');
      const lesson = (await s.api.continual.get({ run: r.run })).lessons[0]!;
      expect(lesson.text).toContain('- Start with it.');
    } finally {
      await s.api.settings.set({ llmBaseUrl: null, llmModel: null });
    }
  });

  it('fails the run when summariser "llm" was asked for and the endpoint fails, or none is configured', async () => {
    reply = { status: 500, body: { error: { message: 'model not loaded' } } };
    await expect(once({ llmBaseUrl: url, llmModel: 'tiny' }, 'llm')).rejects.toThrow(
      /chat\/completions: HTTP 500: model not loaded/,
    );
    await expect(once({}, 'llm')).rejects.toThrow(/no endpoint is configured/);
    expect((await once({})).settings.summariser).toBe('template');
  });
});
