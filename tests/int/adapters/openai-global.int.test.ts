// The OpenAI-compatible endpoint serves `global` once the current bundle has a global adapter
// version, and a completion with it equals the engine run with that adapter's exported tensors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import { createStudio, type Studio } from '../../../main/api/root';
import { directClient } from '../../../main/api/transports/direct';
import { startWebHost, type WebHost } from '../../../main/api/transports/web-host';
import { foldAdapter } from '../../../main/engine';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

let dataDir: string;
let studio: Studio;
let host: WebHost;
let api: StudioApi;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-openai-global-'));
  studio = createStudio({ dataDir, defaultBundleDir: FIXTURE_BUNDLE });
  host = await startWebHost({ dispatcher: studio.dispatcher, staticDir: null, routes: studio.routes });
  api = directClient(studioContract, studio.dispatcher);
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
const messages = [{ role: 'user' as const, content: 'List the steps of a review.' }];
const complete = (model: string) =>
  fetch(`${host.origin}/v1/chat/completions`, {
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
    await writeFixturePeft(join(dataDir, 'peft'), 5, { scale: 1 });
    const { adapter } = await api.adapters.import({ dir: join(dataDir, 'peft') });
    const { adapter: global } = await api.ema.update({ adapterId: adapter.id });
    expect(await models()).toEqual(['base', 'global']);

    const res = await complete('global');
    expect(res.status).toBe(200);
    const text = await textOf(res);
    await api.adapters.export({ id: global.id, dir: join(dataDir, 'global-export') });
    const exported = foldAdapter((await readPeftDir(join(dataDir, 'global-export'))).adapter);
    const direct = await studio.engine.generate(
      { messages, maxTokens: 12, sampling: { temperature: 0 } },
      { emit: () => {}, signal: new AbortController().signal },
      exported,
    );
    expect(text).toBe(direct.text);
    expect(text).not.toBe(await textOf(await complete('base')));
  });
});
