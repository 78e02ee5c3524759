// A Node client for the web host, for tests: fetch for calls, a ws socket for streams.
import WebSocket from 'ws';
import { createClient } from '../../../common/api/client';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { StreamClient } from '../../../common/api/message-link';
import { ServerMessage, type CallOutcome, type ClientMessage } from '../../../common/api/wire';
import { StudioError } from '../../../common/errors';

export async function webClient(origin: string, token: string): Promise<{ api: StudioApi; close(): void }> {
  const ws = new WebSocket(`${origin.replace('http', 'ws')}/api/stream`, {
    headers: { authorization: `Bearer ${token}`, origin },
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let receive: (m: ServerMessage) => void = () => {};
  ws.on('message', (data) => receive(ServerMessage.parse(JSON.parse(String(data)))));
  const streams = new StreamClient({
    send: (m: ClientMessage) => ws.send(JSON.stringify(m)),
    onMessage: (r) => {
      receive = r;
    },
  });
  const api = createClient(studioContract, {
    async call(method, input) {
      const res = await fetch(`${origin}/api/call/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin },
        body: JSON.stringify(input),
      });
      const body = (await res.json()) as CallOutcome;
      if (!body.ok) throw StudioError.from(body.error);
      return body.value;
    },
    stream: (method, input, onEvent) => streams.stream(method, input, onEvent),
  });
  return { api, close: () => ws.close() };
}
