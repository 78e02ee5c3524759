// The OpenAI-compatible endpoint serves skills as `base:<skill>@<version>`: listed for the current
// bundle's hypernetwork, compiled on first use through the compile service, then only looked up.
import { beforeAll, describe, expect, it } from 'vitest';
import { studioSuite, withRoutes } from '../api/transports';
import { HYPER_BUNDLE, SKILLS, TINY_BUNDLE } from './fixture';

const s = studioSuite(withRoutes(), 'pskills-openai-skills-', { defaultBundleDir: HYPER_BUNDLE });

beforeAll(async () => {
  await s.api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
  await s.api.skills.save({ name: 'review-branch', content: SKILLS['review-branch'] });
  await s.api.skills.save({ name: 'review-branch', content: SKILLS['review-branch'] + '\nMore.\n' });
});

const headers = () => ({ authorization: `Bearer ${s.token}`, 'content-type': 'application/json' });
const models = async () =>
  (
    (await (await fetch(`${s.origin}/v1/models`, { headers: headers() })).json()) as { data: { id: string }[] }
  ).data.map((m) => m.id);
const messages = [{ role: 'user' as const, content: 'How do I review a migration?' }];
const complete = (model: string, extra: object = {}) =>
  fetch(`${s.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ model, messages, max_tokens: 10, temperature: 0, ...extra }),
  });
const textOf = async (res: Response) =>
  ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

describe('skill models', () => {
  it('/v1/models lists base:<skill>@<latest> for every skill', async () => {
    expect(await models()).toEqual(
      ['base', 'review-branch', 'sql-review'].map((n, i) =>
        i === 0 ? n : `base:${n}@${n === 'review-branch' ? 2 : 1}`,
      ),
    );
  });

  it('a chat completion compiles the skill on first use, then reuses the stored adapter', async () => {
    expect((await s.api.adapters.list({})).length).toBe(0);
    const res = await complete('base:sql-review@1');
    expect(res.status).toBe(200);
    const text = await textOf(res);
    const rows = await s.api.adapters.list({});
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ recipe: { kind: 'instant' }, skill: { name: 'sql-review', version: 1 } });
    // the same as the engine with the compiled adapter, and not the base model's answer
    const compiled = await s.studio.compiler.compileAdapter({ name: 'sql-review', version: 1 });
    expect(compiled.result.cached).toBe(true);
    const direct = await s.studio.engine.generate(
      { messages, maxTokens: 10, sampling: { temperature: 0 } },
      { emit: () => {}, signal: new AbortController().signal },
      compiled.engine,
    );
    expect(text).toBe(direct.text);
    expect(text).not.toBe(await textOf(await complete('base')));
    // base:<skill> is the latest version; a second call stores nothing new
    expect(await textOf(await complete('base:sql-review'))).toBe(text);
    expect(await s.api.adapters.list({})).toHaveLength(1);
  });

  it('older versions are accepted, and listed once compiled', async () => {
    expect(await models()).not.toContain('base:review-branch@1');
    const res = await complete('base:review-branch@1', { stream: true });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('data: [DONE]');
    expect(await models()).toContain('base:review-branch@1');
  });

  it('unknown skills and versions are model_not_found', async () => {
    for (const model of ['base:nope@1', 'base:sql-review@9', 'base:']) {
      const res = await complete(model);
      expect(res.status, model).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    }
  });

  it('a bundle without a hypernetwork lists no skill models and says why it cannot run one', async () => {
    await s.api.engine.loadBundle({ dir: TINY_BUNDLE });
    try {
      expect(await models()).toEqual(['base']);
      const res = await complete('base:sql-review@1');
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string; param: string } };
      expect(body.error.message).toMatch(/bundle tiny-random .* has no hypernetwork/);
      expect(body.error.param).toBe('model');
    } finally {
      await s.api.engine.loadBundle({ dir: HYPER_BUNDLE });
    }
  });
});
