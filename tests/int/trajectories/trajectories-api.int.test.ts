// trajectories.*, settings.* and verify.* round-tripped through the in-memory transport and the web
// host, against the real services, a SQLite file and the bundle-hyper fixture; and the recording
// hooks: compare.run, engine.generate (the Playground) and the OpenAI endpoint on `"store": true`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';
import { entries } from '../../../common/api/define';
import type { VerifyEvent } from '../../../common/api/verify-schemas';
import { failure, studioSuite, transports, withRoutes } from '../api/transports';
import { HYPER_BUNDLE, SKILLS } from '../compile/fixture';

/** The namespaces this suite covers (tests/int/api/studio-api.int.test.ts leaves them out). */
export const TRAJECTORY_NAMESPACES = ['trajectories', 'settings', 'verify'];

describe.each(transports)('trajectories, settings and verify over $name', (transport) => {
  const covered = new Set<string>();

  const suite = studioSuite(transport, 'pskills-traj-api-', { defaultBundleDir: HYPER_BUNDLE });

  beforeAll(async () => {
    for (const name of ['sql-review', 'review-branch'] as const)
      await suite.api.skills.save({ name, content: SKILLS[name] });
  });
  afterAll(async () => {
    const mine = entries(studioContract)
      .map(([w]) => w)
      .filter((w) => TRAJECTORY_NAMESPACES.includes(w.split('.')[0]!));
    expect([...covered].sort()).toEqual(mine.sort());
  });

  it('compare.run keeps each column as a trajectory with what it ran with', async () => {
    const r = await suite.api.compare.run({ name: 'sql-review', prompt: 'How do I review a migration?', maxTokens: 6 })
      .result;
    const page = await suite.api.trajectories.list({ source: 'compare' });
    covered.add('trajectories.list');
    expect(page.total).toBe(4);
    const byCondition = new Map(page.items.map((t) => [t.condition, t]));
    const info = await suite.api.engine.info({});
    for (const c of r.columns) {
      const t = byCondition.get(c.condition === 'distilled' ? 'adapter' : c.condition)!;
      expect(t).toMatchObject({
        source: 'compare',
        skill: { name: 'sql-review', version: 1, linked: true },
        bundle: { id: info.id },
        sampling: { temperature: 0, maxTokens: 6 },
        prompt: 'How do I review a migration?',
        answer: c.text,
        verdict: null,
        rating: null,
      });
      expect(t.adapter === null ? null : t.adapter.slice(0, 12)).toBe(c.adapter);
    }
    // With the prompt's checker, each column's trajectory keeps the verdict the compare page shows.
    const checked = await suite.api.compare.run({
      name: 'sql-review',
      prompt: 'Checked?',
      maxTokens: 3,
      conditions: ['none'],
      check: { expect: { kind: 'contains', value: 'zq-never-zq' }, test: 't1' },
    }).result;
    const kept = (await suite.api.trajectories.list({ source: 'compare' })).items.find((t) => t.prompt === 'Checked?')!;
    expect(kept.verdict).toEqual({
      passed: false,
      test: 't1',
      reason: expect.stringMatching(/contains "zq-never-zq"/),
    });
    expect(checked.columns).toHaveLength(1);
    const wrong = await suite.api.trajectories.show({ id: byCondition.get('wrong_skill')!.id });
    covered.add('trajectories.show');
    expect(wrong.details).toMatchObject({
      wrongSkill: { name: 'review-branch', version: 1 },
      finishReason: expect.any(String),
    });
    expect(wrong.messages).toEqual([
      { role: 'user', content: 'How do I review a migration?' },
      { role: 'assistant', content: r.columns[3]!.text },
    ]);
  });

  it('engine.generate (the Playground) keeps its run; with the setting off nothing is kept', async () => {
    expect(await suite.api.settings.get({})).toEqual({
      storeTrajectories: true,
      llmBaseUrl: null,
      llmModel: null,
      llmApiKey: null,
      executionProvider: 'cpu',
      maxMergeRank: 512,
    });
    covered.add('settings.get');
    const g = await suite.api.engine.generate({ messages: [{ role: 'user', content: 'Hello' }], maxTokens: 5 }).result;
    const [t] = (await suite.api.trajectories.list({ source: 'playground' })).items;
    expect(t).toMatchObject({
      source: 'playground',
      skill: null,
      condition: 'none',
      adapter: null,
      answer: g.text,
      sampling: { maxTokens: 5 },
    });
    // With a skill's adapter: the skill version it was compiled from, instant, the adapter's key.
    const withSkill = await suite.api.engine.generate({
      messages: [{ role: 'user', content: 'Hello' }],
      maxTokens: 5,
      adapter: { kind: 'skill', name: 'review-branch' },
    }).result;
    const [s] = (await suite.api.trajectories.list({ source: 'playground', skill: 'review-branch' })).items;
    expect(s).toMatchObject({
      skill: { name: 'review-branch', version: 1 },
      condition: 'instant',
      answer: withSkill.text,
    });
    expect(s!.adapter!.slice(0, 12)).toBe(withSkill.adapter);

    expect(await suite.api.settings.set({ storeTrajectories: false })).toEqual({
      storeTrajectories: false,
      llmBaseUrl: null,
      llmModel: null,
      llmApiKey: null,
      executionProvider: 'cpu',
      maxMergeRank: 512,
    });
    covered.add('settings.set');
    const before = (await suite.api.trajectories.list({})).total;
    await suite.api.engine.generate({ prompt: 'Hello', maxTokens: 3 }).result;
    await suite.api.compare.run({ name: 'sql-review', prompt: 'Again?', maxTokens: 3, conditions: ['none'] }).result;
    expect((await suite.api.trajectories.list({})).total).toBe(before);
    await suite.api.settings.set({ storeTrajectories: true });
    expect((await failure(suite.api.settings.set({ storeTrajectories: 'yes' } as never))).code).toBe('invalid_input');
  });

  it('add, rate, export and import (a bad line names its number and nothing is written)', async () => {
    const added = await suite.api.trajectories.add({
      source: 'evolve',
      skill: { name: 'review-branch' },
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
      details: { run: 1 },
    });
    covered.add('trajectories.add');
    expect(added).toMatchObject({
      source: 'evolve',
      skill: { name: 'review-branch', version: 1 },
      details: { run: 1 },
    });
    expect((await failure(suite.api.trajectories.add({ source: 'evolve', messages: [] }))).code).toBe('invalid_input');

    const rated = await suite.api.trajectories.rate({ id: added.id.slice(0, 10), rating: 'up', note: 'good' });
    covered.add('trajectories.rate');
    expect(rated.rating).toMatchObject({ value: 'up', note: 'good' });

    const file = join(suite.dataDir, 'out.jsonl');
    const all = await suite.api.trajectories.list({ limit: 1000 });
    expect(await suite.api.trajectories.export({ file })).toMatchObject({ file, count: all.total });
    covered.add('trajectories.export');
    const stage2 = join(suite.dataDir, 'stage2.jsonl');
    expect(await suite.api.trajectories.export({ file: stage2, stage2: true })).toMatchObject({ count: 1 });
    expect(JSON.parse(readFileSync(stage2, 'utf8'))).toMatchObject({
      skill: 'review-branch',
      skill_text: SKILLS['review-branch'],
      source: 'evolve',
    });
    expect((await failure(suite.api.trajectories.export({ file: 'relative.jsonl' }))).code).toBe('invalid_input');

    expect(await suite.api.trajectories.import({ file })).toEqual({ imported: 0, unchanged: all.total, updated: 0 });
    covered.add('trajectories.import');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const fresh = lines.map((l) => ({ ...JSON.parse(l), id: undefined }) as Record<string, unknown>);
    const bad = join(suite.dataDir, 'bad.jsonl');
    writeFileSync(bad, [JSON.stringify(fresh[0]), JSON.stringify(fresh[1]), '{"skill": null}'].join('\n'));
    const err = await failure(suite.api.trajectories.import({ file: bad }));
    expect(err).toMatchObject({ code: 'invalid_input', details: { line: 3 } });
    expect(err.message).toMatch(/^line 3: /);
    expect((await suite.api.trajectories.list({})).total).toBe(all.total);
  });

  it('verify.setTests / tests store tests with a version; verify.run reports the pass rate', async () => {
    const tests = [
      {
        id: 'never',
        prompt: 'Say something.',
        expect: { kind: 'exact' as const, value: 'a sentence this random model will not write 12345' },
      },
      {
        id: 'always',
        messages: [{ role: 'user' as const, content: 'Say something else.' }],
        expect: { kind: 'not' as const, of: { kind: 'contains' as const, value: 'zq-never-zq' } },
      },
      {
        id: 'json',
        prompt: 'Answer in JSON.',
        expect: { kind: 'json_schema' as const, schema: { type: 'object', required: ['ok'] } },
      },
    ];
    const set = await suite.api.verify.setTests({ name: 'sql-review', tests });
    covered.add('verify.setTests');
    expect(set).toMatchObject({ skill: { name: 'sql-review', version: 1 }, from: 1 });
    expect(set.tests.map((t) => t.id)).toEqual(['never', 'always', 'json']);
    // A new version inherits the tests until it is given its own.
    await suite.api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] + '\nMore.\n' });
    expect(await suite.api.verify.tests({ name: 'sql-review' })).toMatchObject({ skill: { version: 2 }, from: 1 });
    covered.add('verify.tests');
    // Refused at the boundary: duplicate ids, a regex outside the checker language, an unconvertible schema.
    for (const bad of [
      [tests[0], tests[0]],
      [{ ...tests[0], expect: { kind: 'regex', pattern: '(?<=x)' } }],
      [{ ...tests[0], expect: { kind: 'json_schema', schema: { if: {} } } }],
      [{ ...tests[0], messages: [] }],
    ]) {
      expect((await failure(suite.api.verify.setTests({ name: 'sql-review', tests: bad as never }))).code).toBe(
        'invalid_input',
      );
    }

    const events: VerifyEvent[] = [];
    const r = await suite.api.verify.run({ name: 'sql-review', version: 1, maxTokens: 8 }, (e) => events.push(e))
      .result;
    covered.add('verify.run');
    expect(r).toMatchObject({ skill: { name: 'sql-review', version: 1 }, testsFrom: 1, mode: 'instant', n: 3 });
    expect(r.adapter).toMatch(/^[0-9a-f]{12}$/);
    const byId = new Map(r.results.map((t) => [t.id, t]));
    expect(byId.get('never')).toMatchObject({ passed: false, passRate: 0 });
    expect(byId.get('always')).toMatchObject({ passed: true, passRate: 1, reason: null });
    expect(r.passed).toBe(r.results.filter((t) => t.passed).length);
    expect(r.passRate).toBeCloseTo(r.passed / 3);
    expect(events.filter((e) => e.type === 'result').map((e) => (e.type === 'result' ? e.id : ''))).toEqual([
      'never',
      'always',
      'json',
    ]);
    // Each answer is kept with its verdict (source eval).
    const kept = await suite.api.trajectories.list({ source: 'eval', skill: 'sql-review', version: 1 });
    expect(kept.total).toBe(3);
    expect(kept.items.filter((t) => t.verdict?.passed).length).toBe(r.passed);

    expect((await failure(suite.api.verify.run({ name: 'sql-review', mode: 'adapter' }).result)).code).toBe(
      'invalid_input',
    );
    expect((await failure(suite.api.verify.run({ name: 'sql-review', tests: ['nope'] }).result)).code).toBe(
      'not_found',
    );
  });
});

describe('the OpenAI endpoint stores a completion only when the request says "store": true', () => {
  const s = studioSuite(withRoutes(), 'pskills-traj-openai-', { defaultBundleDir: HYPER_BUNDLE });

  beforeAll(async () => {
    await s.studio.dispatcher.call('skills.save', { name: 'sql-review', content: SKILLS['sql-review'] });
  });

  const complete = (body: object) =>
    fetch(`${s.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0, ...body }),
    });

  it('keeps nothing by default, and the run with its model, adapter and metadata when asked', async () => {
    expect((await complete({ model: 'base' })).status).toBe(200);
    expect(s.studio.trajectories.list({}).total).toBe(0);
    const res = await complete({ model: 'base:sql-review@1', store: true, metadata: { experiment: 'e1' } });
    expect(res.status).toBe(200);
    const text = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const sse = await complete({ model: 'base', store: true, stream: true });
    await sse.text();
    const page = s.studio.trajectories.list({ source: 'openai' });
    expect(page.total).toBe(2);
    const skill = s.studio.trajectories.show({ id: page.items.find((t) => t.skill)!.id });
    expect(skill).toMatchObject({
      skill: { name: 'sql-review', version: 1 },
      condition: 'instant',
      sampling: { temperature: 0, maxTokens: 4 },
      details: { model: 'base:sql-review@1', metadata: { experiment: 'e1' } },
    });
    expect(skill.adapter).toMatch(/^[0-9a-f]{64}$/);
    expect(skill.messages.at(-1)).toEqual({ role: 'assistant', content: text });
    expect(page.items.find((t) => !t.skill)).toMatchObject({ condition: 'none', adapter: null });
    expect((await complete({ model: 'base', store: true, metadata: { k: 'x'.repeat(600) } })).status).toBe(400);
  });
});
