// The LLM generator against a small OpenAI-compatible chat-completions server on 127.0.0.1 (in this
// test): the request it sends, the SKILL.md it takes from a reply, the errors it gives; and an evolve
// run through the studio with generator "llm" read from the settings.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StudioError } from '../../../common/errors';
import { LlmGenerator, skillFromReply } from '../../../main/evolve/llm-generator';
import { HYPER_BUNDLE } from '../compile/fixture';
import { EVOLVE_TESTS, evolveSkill } from './fixture';
import { direct, studioSuite } from '../api/transports';

type Handler = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base: string;
let handler: Handler;
const seen: { body: Record<string, unknown>; auth: string | undefined; path: string }[] = [];

const reply = (res: ServerResponse, status: number, json: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(json));
};
const completion = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'tiny',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

const PARENT = evolveSkill('sql-review');
const REVISED = PARENT.replace('# sql-review\n', '# sql-review\n\n## Checklist\n\n- [ ] Name the lock.\n');

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ body, auth: req.headers.authorization, path: req.url ?? '' });
      handler(body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const input = (count = 1) => ({
  parent: PARENT,
  tests: EVOLVE_TESTS,
  count,
  key: '0:1',
  failures: [{ id: 'never', reason: 'not the exact text' }],
});

describe('LLM generator', () => {
  it('asks POST {base}/chat/completions with the model, the key and the skill, and takes the fenced SKILL.md', async () => {
    seen.length = 0;
    handler = (_b, _q, res) => reply(res, 200, completion(`Here it is:\n\n\`\`\`markdown\n${REVISED}\`\`\`\nDone.`));
    const gen = new LlmGenerator({ baseUrl: `${base}/`, model: 'tiny', apiKey: 'sk-test' });
    const out = await gen.propose(input(2));
    expect(out).toEqual([{ text: REVISED, operator: 'llm', note: 'tiny, reply 1' }]); // the same reply twice: one candidate
    expect(seen).toHaveLength(2);
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.auth).toBe('Bearer sk-test');
    expect(seen[0]!.body.model).toBe('tiny');
    const messages = seen[0]!.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[1]!.content).toContain(PARENT);
    expect(messages[1]!.content).toContain('- never: not the exact text');
  });

  it('skips a reply that is not a SKILL.md of the same skill; none valid is an error naming the endpoint', async () => {
    handler = (_b, _q, res) => reply(res, 200, completion('I would rather not.'));
    const gen = new LlmGenerator({ baseUrl: base, model: 'tiny', apiKey: null });
    await expect(gen.propose(input())).rejects.toThrow(
      /chat\/completions: no reply was a valid SKILL.md \(reply 1: line 1/,
    );
    handler = (_b, _q, res) => reply(res, 200, completion(REVISED.replace('name: sql-review', 'name: other')));
    await expect(gen.propose(input())).rejects.toThrow(/its name is "other", not "sql-review"/);
  });

  it('reports HTTP errors, bodies that are not completions, an endpoint that is not there and one that never answers', async () => {
    const gen = new LlmGenerator({ baseUrl: base, model: 'tiny', apiKey: 'bad' });
    handler = (_b, _q, res) => reply(res, 401, { error: { message: 'Incorrect API key provided' } });
    await expect(gen.propose(input())).rejects.toThrow(
      `${base}/chat/completions: HTTP 401: Incorrect API key provided`,
    );
    handler = (_b, _q, res) => reply(res, 200, { choices: [] });
    await expect(gen.propose(input())).rejects.toThrow(/has no choices\[0\]\.message\.content/);
    handler = () => {}; // never answers
    const impatient = new LlmGenerator({ baseUrl: base, model: 'tiny', apiKey: null, timeoutMs: 300 });
    await expect(impatient.propose(input())).rejects.toThrow(/no answer within 0.3 s/);
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r())); // a port nothing listens on
    const closed = new LlmGenerator({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'tiny', apiKey: null });
    await expect(closed.propose(input())).rejects.toThrow(/cannot reach the endpoint \(ECONNREFUSED\)/);
    expect(() => new LlmGenerator({ baseUrl: 'ftp://x', model: 'm', apiKey: null })).toThrow(StudioError);
  });

  it('a cancelled request is a cancel, not an endpoint error', async () => {
    handler = () => {};
    const abort = new AbortController();
    const gen = new LlmGenerator({ baseUrl: base, model: 'tiny', apiKey: null });
    const p = gen.propose({ ...input(), signal: abort.signal });
    abort.abort();
    await expect(p).rejects.toMatchObject({ code: 'cancelled' });
  });

  it('skillFromReply takes the first fenced block that opens with frontmatter, else the reply', () => {
    expect(skillFromReply('```sh\nls\n```\n```md\n---\nname: a\n---\nx\n```')).toBe('---\nname: a\n---\nx\n');
    expect(skillFromReply('---\nname: a\n---\nx')).toBe('---\nname: a\n---\nx\n');
  });
});

describe('evolve with generator "llm" from the settings', () => {
  const s = studioSuite(direct, 'pskills-evolve-llm-', { defaultBundleDir: HYPER_BUNDLE });

  it('stores the endpoint’s candidates as operator llm, scored like any other', async () => {
    await s.api.skills.save({ name: 'sql-review', content: PARENT });
    await s.api.verify.setTests({ name: 'sql-review', tests: EVOLVE_TESTS });
    await s.api.settings.set({ llmBaseUrl: base, llmModel: 'tiny' });
    handler = (_b, _q, res) => reply(res, 200, completion(`\`\`\`markdown\n${REVISED}\`\`\``));
    const r = await s.api.evolve.run({
      name: 'sql-review',
      iterations: 1,
      candidates: 1,
      generator: 'llm',
      modes: ['in_context'],
      maxTokens: 4,
    }).result;
    expect(r.run).toMatchObject({ generator: 'llm', status: 'done', modes: ['in_context'] });
    expect(r.iterations[0]!.candidateScores).toEqual([0.5]);
    const detail = await s.api.evolve.get({ run: r.run.id });
    expect(detail.candidates[1]).toMatchObject({ operator: 'llm', content: REVISED, score: 0.5 });
    expect(detail.candidates[1]!.diff).toContain('+- [ ] Name the lock.');
  });
});
