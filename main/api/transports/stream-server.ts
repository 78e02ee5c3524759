// Server side of the message protocol for one connection: starts streams, forwards their
// events, cancels them on request or when the connection closes.
import { ClientMessage, type ServerMessage } from '../../../common/api/wire';
import { toEnvelope } from '../../../common/errors';
import type { Dispatcher } from '../dispatcher';
import type { Contract } from '../../../common/api/define';

export class StreamServer {
  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly dispatcher: Dispatcher<Contract>,
    private readonly send: (msg: ServerMessage) => void,
  ) {}

  receive(raw: unknown): void {
    const parsed = ClientMessage.safeParse(raw);
    if (!parsed.success) {
      const id = typeof (raw as { id?: unknown })?.id === 'string' ? (raw as { id: string }).id : '?';
      this.send({ t: 'err', id, error: { code: 'invalid_input', message: 'malformed stream message' } });
      return;
    }
    const msg = parsed.data;
    if (msg.t === 'cancel') {
      this.running.get(msg.id)?.abort();
      return;
    }
    if (this.running.has(msg.id)) {
      this.send({ t: 'err', id: msg.id, error: { code: 'conflict', message: `stream id ${msg.id} already running` } });
      return;
    }
    const controller = new AbortController();
    this.running.set(msg.id, controller);
    this.dispatcher
      .stream(msg.method, msg.input, (event) => this.send({ t: 'event', id: msg.id, event }), controller.signal)
      .then(
        (value) => this.send({ t: 'ok', id: msg.id, value }),
        (err) => this.send({ t: 'err', id: msg.id, error: toEnvelope(err) }),
      )
      .finally(() => this.running.delete(msg.id));
  }

  /** The connection is gone: stop everything it started. */
  close(): void {
    for (const c of this.running.values()) c.abort();
    this.running.clear();
  }
}
