// The OpenAI-compatible endpoint serves `global` once the current bundle has a global adapter
// version, and a completion with it equals the engine run with that adapter's exported tensors.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import { foldAdapter } from '../../../main/engine';
import { studioSuite, withRoutes } from '../api/transports';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

const s = studioSuite(withRoutes(), 'pskills-openai-global-', { defaultBundleDir: FIXTURE_BUNDLE });

const headers = () => ({ authorization: `Bearer ${s.token}`, 'content-type': 'application/json' });
const models = async () =>
  (
    (await (await fetch(`${s.origin}/v1/models`, { headers: headers() })).json()) as { data: { id: string }[] }
  ).data.map((m) => m.id);
const messages = [{ role: 'user' as const, content: 'List the steps of a review.' }];
const complete = (model: string) =>
  fetch(`${s.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ model, messages, max_tokens: 12, temperature: 0 }),
  });
const textOf = async (res: Response) =>
  ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

describe('model "global"', () => {
  it('is unknown until a global version exists', async () => {
    expect(await models()).toEqual(['base']);
    const res = await complete('global');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });

  it('is listed after ema.update and runs with the global adapter', async () => {
    await writeFixturePeft(join(s.dataDir, 'peft'), 5, { scale: 1 });
    const { adapter } = await s.api.adapters.import({ dir: join(s.dataDir, 'peft') });
    const { adapter: global } = await s.api.ema.update({ adapterId: adapter.id });
    expect(await models()).toEqual(['base', 'global']);

    const res = await complete('global');
    expect(res.status).toBe(200);
    const text = await textOf(res);
    await s.api.adapters.export({ id: global.id, dir: join(s.dataDir, 'global-export') });
    const exported = foldAdapter((await readPeftDir(join(s.dataDir, 'global-export'))).adapter);
    const direct = await s.studio.engine.generate(
      { messages, maxTokens: 12, sampling: { temperature: 0 } },
      { emit: () => {}, signal: new AbortController().signal },
      exported,
    );
    expect(text).toBe(direct.text);
    expect(text).not.toBe(await textOf(await complete('base')));
  });
});
