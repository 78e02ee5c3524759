// OpenAI-compatible endpoint on the web host: GET /v1/models, POST /v1/chat/completions
// (JSON or SSE). Auth and the 127.0.0.1 binding come from the web host in front of it.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GenerateInput, GenerateResult } from '../../../common/api/engine-schemas';
import { StudioError, toEnvelope } from '../../../common/errors';
import type { EngineAdapter } from '../../engine';
import type { EngineService } from '../services/engine-service';
import type { OpenAiRecorder } from '../services/openai-recorder';
import { readBody, sendJson } from '../transports/http-util';
import type { Route } from '../transports/web-host';
import type { ModelCatalog } from './models';
import { ChatCompletionRequest, openAiBody, type OpenAiError } from './schemas';

const MAX_BODY = 4 * 1024 * 1024;

const fail = (res: ServerResponse, e: OpenAiError) => sendJson(res, e.status, openAiBody(e));

function badRequest(message: string, param: string | null = null, code: string | null = null): OpenAiError {
  return { status: 400, message, type: 'invalid_request_error', param, code };
}

/** Maps a studio error to OpenAI's error shape. */
function fromStudio(err: unknown): OpenAiError {
  const env = toEnvelope(err);
  const details = (env.details ?? {}) as { max_positions?: number; status?: number };
  if (env.code === 'invalid_input' && details.max_positions !== undefined) {
    return badRequest(env.message, 'messages', 'context_length_exceeded');
  }
  if (env.code === 'invalid_input') return { ...badRequest(env.message), status: details.status ?? 400 };
  if (env.code === 'not_found')
    return { status: 404, message: env.message, type: 'not_found_error', param: null, code: null };
  return { status: 500, message: env.message, type: 'server_error', param: null, code: null };
}

function toInput(body: ChatCompletionRequest): GenerateInput | OpenAiError {
  if (body.frequency_penalty || body.presence_penalty) {
    return badRequest(
      'frequency_penalty and presence_penalty are not supported; use repetition_penalty',
      body.frequency_penalty ? 'frequency_penalty' : 'presence_penalty',
    );
  }
  const stop = body.stop == null ? undefined : Array.isArray(body.stop) ? body.stop : [body.stop];
  return {
    // 'developer' is OpenAI's newer name for 'system'.
    messages: body.messages.map((m) => ({ role: m.role === 'developer' ? 'system' : m.role, content: m.content })),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stop,
    sampling: {
      temperature: body.temperature ?? 1,
      ...(body.top_p != null && { topP: body.top_p }),
      ...(body.top_k != null && { topK: body.top_k }),
      ...(body.repetition_penalty != null && { repetitionPenalty: body.repetition_penalty }),
      ...(body.seed != null && { seed: body.seed }),
    },
  };
}

const finishOf = (r: GenerateResult['finishReason']) => (r === 'length' ? 'length' : 'stop');
const usageOf = (r: GenerateResult) => ({
  prompt_tokens: r.promptTokens,
  completion_tokens: r.completionTokens,
  total_tokens: r.promptTokens + r.completionTokens,
});

const ROUTE_METHODS: Record<string, string[]> = { '/v1/models': ['GET'], '/v1/chat/completions': ['POST'] };

/** `recorder`: keeps completions whose request says `"store": true` as trajectories. */
export function openAiRoute(
  engine: EngineService,
  catalog: ModelCatalog,
  recorder: Pick<OpenAiRecorder, 'record'> | null = null,
): Route {
  return async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (!url.pathname.startsWith('/v1/')) return false;
    if (url.pathname === '/v1/models' && req.method === 'GET') {
      const data = (await catalog.list()).map((m) => ({
        id: m.id,
        object: 'model',
        created: m.created,
        owned_by: 'pskills',
      }));
      sendJson(res, 200, { object: 'list', data });
      return true;
    }
    // A known path asked with another method is 405 with the methods it takes (RFC 9110 §15.5.6).
    const allow = ROUTE_METHODS[url.pathname];
    if (allow && !allow.includes(req.method ?? '')) {
      sendJson(
        res,
        405,
        openAiBody({
          status: 405,
          message: `${req.method} ${url.pathname}: method not allowed (use ${allow.join(', ')})`,
          type: 'invalid_request_error',
          param: null,
          code: 'method_not_allowed',
        }),
        { allow: allow.join(', ') },
      );
      return true;
    }
    if (url.pathname !== '/v1/chat/completions' || req.method !== 'POST') {
      fail(res, {
        status: 404,
        message: `no route ${req.method} ${url.pathname}`,
        type: 'not_found_error',
        param: null,
        code: null,
      });
      return true;
    }
    await chatCompletions(req, res, engine, catalog, recorder);
    return true;
  };
}

/** The request body, parsed and checked, or the error to answer with. */
async function readRequest(req: IncomingMessage): Promise<ChatCompletionRequest | OpenAiError> {
  let raw: unknown;
  try {
    const buf = await readBody(req, MAX_BODY);
    raw = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    if (err instanceof StudioError) return { ...badRequest(err.message), status: 413 };
    return badRequest('request body is not valid JSON');
  }
  const parsed = ChatCompletionRequest.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  return badRequest(`${issue.path.join('.') || 'body'}: ${issue.message}`, issue.path.join('.') || null);
}

/** The adapter that serves `model` (null: the base), or the error to answer with. */
async function resolveModel(
  catalog: ModelCatalog,
  model: string,
): Promise<{ adapter: EngineAdapter | null } | OpenAiError> {
  let adapter: EngineAdapter | null | undefined;
  try {
    adapter = await catalog.resolve(model); // a skill model compiles on first use
  } catch (err) {
    return { ...fromStudio(err), param: 'model' };
  }
  if (adapter !== undefined) return { adapter };
  // Short whatever the library's size (it listed all 10,004 models, 200 KB): where to find them instead.
  const asked = model.length > 200 ? `${model.slice(0, 200)}…` : model;
  return {
    status: 404,
    message: `The model '${asked}' does not exist; GET /v1/models lists the models served (base, global, and each skill as base:NAME@VERSION)`,
    type: 'invalid_request_error',
    param: 'model',
    code: 'model_not_found',
  };
}

/** What names a completion's answer, and its generation (`emit`: each token's text). */
type Head = { id: string; created: number; model: string };
type Generate = (emit: (text: string) => void) => Promise<GenerateResult>;

async function chatCompletions(
  req: IncomingMessage,
  res: ServerResponse,
  engine: EngineService,
  catalog: ModelCatalog,
  recorder: Pick<OpenAiRecorder, 'record'> | null,
): Promise<void> {
  const body = await readRequest(req);
  if ('status' in body) return fail(res, body);
  const resolved = await resolveModel(catalog, body.model);
  if ('status' in resolved) return fail(res, resolved);
  const input = toInput(body);
  if ('status' in input) return fail(res, input);

  const head = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: body.model };
  const controller = new AbortController();
  res.on('close', () => controller.abort()); // the client went away: stop generating
  const generate: Generate = async (emit) => {
    const ctx = { signal: controller.signal, emit: (e: { text: string }) => emit(e.text) };
    const r = await engine.generate(input, ctx, resolved.adapter);
    // Before the answer goes out, so a client that asked sees it kept.
    if (body.store && recorder && r.finishReason !== 'cancelled')
      await recorder.record({ model: body.model, input, result: r, metadata: body.metadata ?? null });
    return r;
  };
  if (body.stream) await answerStream(res, head, generate, body.stream_options?.include_usage ?? false);
  else await answerJson(res, head, generate);
}

async function answerJson(res: ServerResponse, head: Head, generate: Generate): Promise<void> {
  try {
    const r = await generate(() => {});
    sendJson(res, 200, {
      id: head.id,
      object: 'chat.completion',
      created: head.created,
      model: head.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: r.text },
          finish_reason: finishOf(r.finishReason),
          logprobs: null,
        },
      ],
      usage: usageOf(r),
    });
  } catch (err) {
    fail(res, fromStudio(err));
  }
}

/** SSE: headers go out with the first token, so errors before it are still plain JSON errors. */
async function answerStream(res: ServerResponse, head: Head, generate: Generate, usage: boolean): Promise<void> {
  const base = { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model };
  const chunk = (delta: object, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const send = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  const open = () => {
    if (res.headersSent) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    send(chunk({ role: 'assistant', content: '' }, null));
  };
  try {
    const r = await generate((text) => {
      open();
      if (text) send(chunk({ content: text }, null));
    });
    open();
    send(chunk({}, finishOf(r.finishReason)));
    if (usage) send({ ...base, choices: [], usage: usageOf(r) });
    res.end('data: [DONE]\n\n');
  } catch (err) {
    if (!res.headersSent) return fail(res, fromStudio(err));
    send(openAiBody(fromStudio(err)));
    res.end();
  }
}
