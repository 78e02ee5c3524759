// In-memory transport pair for tests: the same message protocol and JSON round trip as the
// real transports, without a socket.
import { createClient, type Link } from '../../../common/api/client';
import type { ClientOf, Contract } from '../../../common/api/define';
import { StreamClient } from '../../../common/api/message-link';
import type { ClientMessage, ServerMessage } from '../../../common/api/wire';
import { StudioError } from '../../../common/errors';
import type { Dispatcher } from '../../../main/api/dispatcher';
import { StreamServer } from '../../../main/api/transports/stream-server';

const wire = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export function memoryPair<C extends Contract>(
  contract: C,
  dispatcher: Dispatcher<C>,
): { api: ClientOf<C>; close(): void } {
  let toClient: (msg: ServerMessage) => void = () => {};
  const server = new StreamServer(dispatcher as Dispatcher<Contract>, (msg) =>
    queueMicrotask(() => toClient(wire(msg))),
  );
  const streams = new StreamClient({
    send: (msg: ClientMessage) => queueMicrotask(() => server.receive(wire(msg))),
    onMessage: (receive) => {
      toClient = receive;
    },
  });
  const link: Link = {
    async call(method, input) {
      const outcome = await dispatcher.callOutcome(method, wire(input));
      const back = wire(outcome);
      if (!back.ok) throw StudioError.from(back.error);
      return back.value;
    },
    stream: (method, input, onEvent) => streams.stream(method, input, onEvent),
  };
  return { api: createClient(contract, link), close: () => server.close() };
}
