// The OpenAI-compatible endpoint serves skills as `base:<skill>@<version>`: listed for the current
// bundle's hypernetwork, compiled on first use through the compile service, then only looked up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { createStudio, type Studio } from '../../../main/api/root';
import { directClient } from '../../../main/api/transports/direct';
import { startWebHost, type WebHost } from '../../../main/api/transports/web-host';
import { HYPER_BUNDLE, SKILLS, TINY_BUNDLE } from './fixture';

let dataDir: string;
let studio: Studio;
let host: WebHost;
let api: StudioApi;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-openai-skills-'));
  studio = createStudio({ dataDir, defaultBundleDir: HYPER_BUNDLE });
  host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: null, routes: studio.routes });
  api = directClient(studioContract, studio.dispatcher);
  await api.skills.save({ name: 'sql-review', content: SKILLS['sql-review'] });
  await api.skills.save({ name: 'review-branch', content: SKILLS['review-branch'] });
  await api.skills.save({ name: 'review-branch', content: SKILLS['review-branch'] + '\nMore.\n' });
});
afterAll(async () => {
  await host.close();
  await studio.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

const headers = () => ({ authorization: `Bearer ${host.token}`, 'content-type': 'application/json' });
const models = async () =>
  (
    (await (await fetch(`${host.origin}/v1/models`, { headers: headers() })).json()) as { data: { id: string }[] }
  ).data.map((m) => m.id);
const messages = [{ role: 'user' as const, content: 'How do I review a migration?' }];
const complete = (model: string, extra: object = {}) =>
  fetch(`${host.origin}/v1/chat/completions`, {
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
    expect((await api.adapters.list({})).length).toBe(0);
    const res = await complete('base:sql-review@1');
    expect(res.status).toBe(200);
    const text = await textOf(res);
    const rows = await api.adapters.list({});
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ recipe: { kind: 'compile' }, skill: { name: 'sql-review', version: 1 } });
    // the same as the engine with the compiled adapter, and not the base model's answer
    const compiled = await studio.compiler.compileAdapter({ name: 'sql-review', version: 1 });
    expect(compiled.result.cached).toBe(true);
    const direct = await studio.engine.generate(
      { messages, maxTokens: 10, sampling: { temperature: 0 } },
      { emit: () => {}, signal: new AbortController().signal },
      compiled.engine,
    );
    expect(text).toBe(direct.text);
    expect(text).not.toBe(await textOf(await complete('base')));
    // base:<skill> is the latest version; a second call stores nothing new
    expect(await textOf(await complete('base:sql-review'))).toBe(text);
    expect(await api.adapters.list({})).toHaveLength(1);
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
    await api.engine.loadBundle({ dir: TINY_BUNDLE });
    try {
      expect(await models()).toEqual(['base']);
      const res = await complete('base:sql-review@1');
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string; param: string } };
      expect(body.error.message).toMatch(/bundle tiny-random .* has no hypernetwork/);
      expect(body.error.param).toBe('model');
    } finally {
      await api.engine.loadBundle({ dir: HYPER_BUNDLE });
    }
  });
});
