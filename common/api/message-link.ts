// Client side of the message protocol: streams (and optionally calls) over any duplex
// message channel — a WebSocket, or the in-memory pair in tests.
import { StudioError, type ErrorCode } from '../errors';
import type { StreamHandle } from './define';
import type { ClientMessage, ServerMessage } from './wire';

export interface MessageChannel {
  send(msg: ClientMessage): void;
  /** Registers the single receiver of server messages. */
  onMessage(receive: (msg: ServerMessage) => void): void;
}

export class StreamClient {
  private next = 0;
  private readonly pending = new Map<
    string,
    { onEvent: (e: unknown) => void; resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();

  constructor(
    private readonly channel: MessageChannel,
    private readonly opts: { maxMessageBytes?: number } = {},
  ) {
    channel.onMessage((msg) => this.receive(msg));
  }

  stream(method: string, input: unknown, onEvent: (event: unknown) => void): StreamHandle<unknown> {
    const id = `s${++this.next}`;
    const tooBig = this.oversize({ t: 'start', id, method, input });
    if (tooBig)
      return { result: Promise.reject(new StudioError('invalid_input', `${method}: ${tooBig}`)), cancel: () => {} };
    const result = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { onEvent, resolve, reject });
    });
    this.channel.send({ t: 'start', id, method, input });
    return {
      result,
      cancel: () => {
        if (this.pending.has(id)) this.channel.send({ t: 'cancel', id });
      },
    };
  }

  /** Over the channel's limit the server would close the socket, failing every stream on it. */
  private oversize(msg: ClientMessage): string | null {
    const max = this.opts.maxMessageBytes;
    if (max === undefined) return null;
    const text = JSON.stringify(msg);
    if (text.length * 3 <= max) return null; // cheap: no UTF-8 character takes more than 3 bytes per UTF-16 unit
    const bytes = new TextEncoder().encode(text).byteLength;
    return bytes <= max
      ? null
      : `the request is ${bytes.toLocaleString('en-US')} bytes; a stream message may have at most ${max.toLocaleString('en-US')} (shorten the text)`;
  }

  /** How many streams wait for their result. */
  get open(): number {
    return this.pending.size;
  }

  /** Fails every open stream, e.g. when the socket closes. */
  failAll(reason: string, code: ErrorCode = 'internal'): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new StudioError(code, reason));
    }
  }

  private receive(msg: ServerMessage): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    if (msg.t === 'event') return p.onEvent(msg.event);
    this.pending.delete(msg.id);
    if (msg.t === 'ok') p.resolve(msg.value);
    else p.reject(StudioError.from(msg.error));
  }
}
