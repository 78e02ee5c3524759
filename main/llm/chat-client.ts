// The one OpenAI-compatible chat-completions client (a local server or a cloud API), used by evolve's
// LLM generator and the continual LLM summariser: POST {baseUrl}/chat/completions with the model and
// the messages, a timeout per request, cancel through the caller's signal, and every failure a
// StudioError that names the endpoint (and the HTTP status when there is one).
import { StudioError } from '../../common/errors';

export interface LlmEndpoint {
  /** e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | null;
  /** Per request; default LLM_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export const LLM_TIMEOUT_MS = 120_000;

/** The endpoint the studio's settings name (llmBaseUrl, llmModel, llmApiKey; env PSKILLS_LLM_API_KEY
 *  wins over the stored key), or null when none is configured. */
export function endpointFromSettings(
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): LlmEndpoint | null {
  const { llmBaseUrl, llmModel, llmApiKey } = settings;
  if (typeof llmBaseUrl !== 'string' || !llmBaseUrl || typeof llmModel !== 'string' || !llmModel) return null;
  const stored = typeof llmApiKey === 'string' && llmApiKey ? llmApiKey : null;
  return { baseUrl: llmBaseUrl, model: llmModel, apiKey: env.PSKILLS_LLM_API_KEY || stored };
}

export class ChatClient {
  /** {baseUrl}/chat/completions: what every error names. */
  readonly url: string;

  constructor(
    readonly endpoint: LlmEndpoint,
    private readonly fetchFn: typeof fetch = (...args) => fetch(...args),
  ) {
    let url: URL;
    try {
      url = new URL(endpoint.baseUrl);
    } catch {
      throw new StudioError('invalid_input', `llmBaseUrl: "${endpoint.baseUrl}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new StudioError('invalid_input', `llmBaseUrl: "${endpoint.baseUrl}" is not an http(s) URL`);
    if (!endpoint.model.trim()) throw new StudioError('invalid_input', 'llmModel: empty');
    this.url = `${endpoint.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  /** One chat completion: the assistant's text. A cancel through `signal` is a `cancelled` error. */
  async complete(
    messages: readonly ChatMessage[],
    opts: { temperature?: number; signal?: AbortSignal } = {},
  ): Promise<string> {
    const timeoutMs = this.endpoint.timeoutMs ?? LLM_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Response;
    let body: string;
    try {
      res = await this.fetchFn(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: this.endpoint.model,
          messages,
          ...(opts.temperature !== undefined && { temperature: opts.temperature }),
        }),
        signal,
      });
      body = await res.text();
    } catch (err) {
      if (opts.signal?.aborted) throw new StudioError('cancelled', `${this.url}: request cancelled`);
      if (timeout.aborted) throw new StudioError('internal', `${this.url}: no answer within ${timeoutMs / 1000} s`);
      // fetch's own message is "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND …) is its cause.
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new StudioError(
        'internal',
        `${this.url}: cannot reach the endpoint (${cause?.code ?? cause?.message ?? (err as Error).message})`,
      );
    }
    let json: { choices?: { message?: { content?: unknown } }[]; error?: { message?: unknown } };
    try {
      json = (JSON.parse(body) ?? {}) as typeof json;
    } catch {
      throw new StudioError('internal', `${this.url}: HTTP ${res.status}, not JSON: ${body.slice(0, 200)}`, {
        status: res.status,
      });
    }
    if (!res.ok) {
      const message = json.error?.message;
      throw new StudioError(
        'internal',
        `${this.url}: HTTP ${res.status}: ${typeof message === 'string' ? message : body.slice(0, 200)}`,
        { status: res.status },
      );
    }
    const text = json.choices?.[0]?.message?.content;
    if (typeof text !== 'string')
      throw new StudioError('internal', `${this.url}: the reply has no choices[0].message.content string`);
    return text;
  }
}
