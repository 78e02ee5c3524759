// The OpenAI-compatible endpoint, driven by the official `openai` npm client and by raw requests.
import { join } from 'node:path';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { studioSuite, withRoutes } from '../api/transports';

const FIXTURE_BUNDLE = join(process.cwd(), 'tests', 'fixtures', 'bundle-tiny');
const host = studioSuite(withRoutes(), 'pskills-openai-', { defaultBundleDir: FIXTURE_BUNDLE });
let client: OpenAI;

beforeAll(() => {
  client = new OpenAI({ baseURL: `${host.origin}/v1`, apiKey: host.token, maxRetries: 0 });
});

const raw = (path: string, body: string, token = host.token) =>
  fetch(`${host.origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  });

describe('OpenAI-compatible endpoint', () => {
  it('lists the models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['base']);
  });

  it('answers a chat completion, greedy and reproducible', async () => {
    const ask = () =>
      client.chat.completions.create({
        model: 'base',
        messages: [{ role: 'user', content: 'List the steps.' }],
        max_tokens: 10,
        temperature: 0,
      });
    const a = await ask();
    const b = await ask();
    expect(a.object).toBe('chat.completion');
    expect(a.choices[0]!.message.role).toBe('assistant');
    expect(a.choices[0]!.message.content).toBe(b.choices[0]!.message.content);
    expect(a.usage!.completion_tokens).toBeGreaterThan(0);
    expect(a.usage!.completion_tokens).toBeLessThanOrEqual(10);
    expect(['stop', 'length']).toContain(a.choices[0]!.finish_reason);
  });

  it('streams the same text over SSE', async () => {
    const whole = await client.chat.completions.create({
      model: 'base',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 12,
      temperature: 0,
    });
    const stream = await client.chat.completions.create({
      model: 'base',
      messages: [{ role: 'user', content: 'Hello' }],
      max_tokens: 12,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: number | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      if (c.usage) usage = c.usage.completion_tokens;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toBe(whole.usage!.completion_tokens);
  });

  it('gives OpenAI-style errors', async () => {
    const unknown = await client.chat.completions
      .create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

    const long = 'word '.repeat(2000);
    const over = await client.chat.completions
      .create({ model: 'base', messages: [{ role: 'user', content: long }] })
      .catch((e: unknown) => e);
    expect(over).toBeInstanceOf(OpenAI.BadRequestError);
    expect((over as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');

    const tooMany = await client.chat.completions
      .create({ model: 'base', messages: [{ role: 'user', content: 'x' }], max_tokens: 100_000 })
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(OpenAI.BadRequestError);

    const badKey = new OpenAI({ baseURL: `${host.origin}/v1`, apiKey: 'wrong', maxRetries: 0 });
    expect(await badKey.models.list().catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);

    const malformed = await raw('/v1/chat/completions', '{"model": "base", ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const huge = await raw(
      '/v1/chat/completions',
      JSON.stringify({ model: 'base', messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] }),
    );
    expect(huge.status).toBe(413);
  });

  it('still answers after errors', async () => {
    const ok = await client.chat.completions.create({
      model: 'base',
      messages: [{ role: 'user', content: 'again' }],
      max_tokens: 3,
      temperature: 0,
    });
    expect(ok.choices).toHaveLength(1);
  });
});
