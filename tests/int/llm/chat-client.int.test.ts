// The shared OpenAI-compatible client against a local HTTP server: the request it sends, the reply it
// takes, and each failure as an error naming the endpoint (HTTP status, a body that is not JSON or not
// a completion, a port nobody listens on, a server that never answers, a cancel); the settings rule.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StudioError } from '../../../common/errors';
import { ChatClient, endpointFromSettings } from '../../../main/llm/chat-client';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let base: string;
let handler: Handler = () => {};
const seen: { path: string; auth: string | undefined; body: Record<string, unknown> }[] = [];

const send = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
};
const MESSAGES = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hello?' },
];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url!, auth: req.headers.authorization, body: JSON.parse(body) as Record<string, unknown> });
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const failure = async (p: Promise<unknown>): Promise<StudioError> => {
  try {
    await p;
  } catch (err) {
    return err as StudioError;
  }
  throw new Error('expected a failure');
};

describe('ChatClient', () => {
  it('POSTs {base}/chat/completions with the model, key, messages and temperature; answers the content', async () => {
    handler = (_q, _b, res) => send(res, 200, JSON.stringify({ choices: [{ message: { content: 'Hi.' } }] }));
    const client = new ChatClient({ baseUrl: `${base}//`, model: 'tiny', apiKey: 'sk-1' });
    expect(client.url).toBe(`${base}/chat/completions`);
    expect(await client.complete(MESSAGES, { temperature: 0.2 })).toBe('Hi.');
    expect(seen.at(-1)).toEqual({
      path: '/v1/chat/completions',
      auth: 'Bearer sk-1',
      body: { model: 'tiny', messages: MESSAGES, temperature: 0.2 },
    });
    await new ChatClient({ baseUrl: base, model: 'tiny', apiKey: null }).complete(MESSAGES);
    expect(seen.at(-1)!.auth).toBeUndefined();
    expect(seen.at(-1)!.body).not.toHaveProperty('temperature');
  });

  it('names the endpoint and the HTTP status of an error reply, with the server message when there is one', async () => {
    const client = new ChatClient({ baseUrl: base, model: 'tiny', apiKey: 'bad' });
    handler = (_q, _b, res) => send(res, 401, JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
    const e = await failure(client.complete(MESSAGES));
    expect(e.message).toBe(`${base}/chat/completions: HTTP 401: Incorrect API key provided`);
    expect(e.details).toEqual({ status: 401 });
    handler = (_q, _b, res) => send(res, 502, '<html>Bad gateway</html>');
    expect((await failure(client.complete(MESSAGES))).message).toBe(
      `${base}/chat/completions: HTTP 502, not JSON: <html>Bad gateway</html>`,
    );
    handler = (_q, _b, res) => send(res, 500, 'null');
    expect((await failure(client.complete(MESSAGES))).message).toBe(`${base}/chat/completions: HTTP 500: null`);
    handler = (_q, _b, res) => send(res, 200, JSON.stringify({ choices: [] }));
    expect((await failure(client.complete(MESSAGES))).message).toMatch(
      /chat\/completions: the reply has no choices\[0\]\.message\.content string$/,
    );
  });

  it('a port nobody listens on, and a server that never answers within the timeout', async () => {
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r()));
    const closed = new ChatClient({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tiny', apiKey: null });
    expect((await failure(closed.complete(MESSAGES))).message).toBe(
      `http://127.0.0.1:${port}/v1/chat/completions: cannot reach the endpoint (ECONNREFUSED)`,
    );
    handler = () => {}; // never answers
    const impatient = new ChatClient({ baseUrl: base, model: 'tiny', apiKey: null, timeoutMs: 250 });
    const e = await failure(impatient.complete(MESSAGES));
    expect(e).toMatchObject({ code: 'internal', message: `${base}/chat/completions: no answer within 0.25 s` });
  });

  it("a cancel through the caller's signal is a cancel, not an endpoint error", async () => {
    handler = () => {};
    const abort = new AbortController();
    const p = new ChatClient({ baseUrl: base, model: 'tiny', apiKey: null }).complete(MESSAGES, {
      signal: abort.signal,
    });
    abort.abort();
    expect(await failure(p)).toMatchObject({ code: 'cancelled' });
  });

  it('refuses a base URL that is not http(s) and an empty model, naming the setting', () => {
    expect(() => new ChatClient({ baseUrl: 'not a url', model: 'm', apiKey: null })).toThrow(
      'llmBaseUrl: "not a url" is not a URL',
    );
    expect(() => new ChatClient({ baseUrl: 'ftp://x/v1', model: 'm', apiKey: null })).toThrow(/not an http\(s\) URL/);
    expect(() => new ChatClient({ baseUrl: base, model: ' ', apiKey: null })).toThrow('llmModel: empty');
  });
});

describe('endpointFromSettings', () => {
  it('needs llmBaseUrl and llmModel; env PSKILLS_LLM_API_KEY wins over the stored key', () => {
    expect(endpointFromSettings({ llmBaseUrl: base, llmModel: null }, {})).toBeNull();
    expect(endpointFromSettings({ llmBaseUrl: null, llmModel: 'm' }, {})).toBeNull();
    expect(endpointFromSettings({ llmBaseUrl: base, llmModel: 'm', llmApiKey: 'k' }, {})).toEqual({
      baseUrl: base,
      model: 'm',
      apiKey: 'k',
    });
    expect(
      endpointFromSettings({ llmBaseUrl: base, llmModel: 'm', llmApiKey: 'k' }, { PSKILLS_LLM_API_KEY: 'e' })!.apiKey,
    ).toBe('e');
    expect(endpointFromSettings({ llmBaseUrl: base, llmModel: 'm', llmApiKey: null }, {})!.apiKey).toBeNull();
  });
});
