// The renderer's one way to the studio: Electron's preload (window.studio) when present,
// otherwise the web host (HTTP for calls, a WebSocket for streams). The launch token arrives in the
// address's fragment, is moved to sessionStorage (this origin and port only) and dropped from the
// address bar; calls send it as `Authorization: Bearer`, streams as a WebSocket subprotocol. No cookie
// ever holds it (docs/security.md "The launch token").
import { bridgeLink, createClient, type Link } from '../../../../common/api/client';
import { studioContract, type StudioApi, type StudioBridge } from '../../../../common/api/contract';
import type { StudioWindowBridge } from '../../../../common/api/ipc-channels';
import { StreamClient } from '../../../../common/api/message-link';
import {
  MAX_STREAM_MESSAGE_BYTES,
  ServerMessage,
  type CallOutcome,
  type ClientMessage,
} from '../../../../common/api/wire';
import { StudioError } from '../../../../common/errors';

declare global {
  interface Window {
    studio?: StudioBridge;
    studioWindow?: StudioWindowBridge;
  }
}

const TOKEN_KEY = 'pskills.token';

const STOPPED = 'the studio server stopped or cannot be reached';
const stoppedListeners = new Set<() => void>();

/** Calls `listener` whenever a call or stream finds the web host gone; returns the unsubscribe. */
export function onServerStopped(listener: () => void): () => void {
  stoppedListeners.add(listener);
  return () => stoppedListeners.delete(listener);
}

function serverStopped(): StudioError {
  for (const listener of stoppedListeners) listener();
  return new StudioError('unavailable', STOPPED);
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // not percent-encoded as we print it: taken as is, and the host says whether it is right
  }
};

const tokenListeners = new Set<() => void>();

/** Calls `listener` when a launch address is opened in this tab once it runs (a restarted host's
 *  address pasted in): calls and streams use its token from then on. Returns the unsubscribe. */
export function onNewToken(listener: () => void): () => void {
  tokenListeners.add(listener);
  return () => tokenListeners.delete(listener);
}

/** The launch token: taken from `#token=…` once (then removed from the address), else sessionStorage.
 *  A route may follow it (`#token=T#/adapters/x`): it stays as the address's hash. */
export function launchToken(): string | null {
  const m = /^#token=([^#&]*)&?(.*)$/.exec(location.hash);
  if (m?.[1]) {
    const before = sessionStorage.getItem(TOKEN_KEY);
    const token = safeDecode(m[1]);
    sessionStorage.setItem(TOKEN_KEY, token);
    if (before !== null) queueMicrotask(() => tokenListeners.forEach((l) => l()));
    const rest = m[2] ? (m[2].startsWith('#') ? m[2] : `#${m[2]}`) : '';
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest}`);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

// Read on every call and connect: a pasted launch address may bring a new one (onNewToken).
const token = () => sessionStorage.getItem(TOKEN_KEY) ?? '';

/** One call as an HTTP POST with the launch token; the host's error comes back as a StudioError. */
async function callOverHttp(method: string, input: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`/api/call/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
      body: JSON.stringify(input ?? {}),
      credentials: 'omit',
    });
  } catch {
    // fetch rejects only when no HTTP answer came: the host is not listening any more.
    throw serverStopped();
  }
  const body = (await res.json().catch(() => null)) as CallOutcome | null;
  if (!body) throw new StudioError('internal', `HTTP ${res.status} from ${method}`);
  if (!body.ok) throw StudioError.from(body.error);
  return body.value;
}

/** Calls over HTTP, streams over one WebSocket opened on the first stream (and again after it closes). */
function webLink(): Link {
  launchToken();
  let socket: WebSocket | null = null;
  let ready: Promise<WebSocket> | null = null;
  const queue: ClientMessage[] = [];
  let receive: (msg: ServerMessage) => void = () => {};

  const connect = (): Promise<WebSocket> => {
    if (ready) return ready;
    ready = new Promise((resolve, reject) => {
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/stream`, [
        'pskills',
        `pskills.token.${token()}`,
      ]);
      ws.onopen = () => {
        socket = ws;
        for (const m of queue.splice(0)) ws.send(JSON.stringify(m));
        resolve(ws);
      };
      ws.onmessage = (ev) => {
        let raw: unknown;
        try {
          raw = JSON.parse(String(ev.data));
        } catch {
          return; // not ours: the server only sends JSON
        }
        const parsed = ServerMessage.safeParse(raw);
        if (parsed.success) receive(parsed.data);
      };
      ws.onerror = () => {
        queue.length = 0; // those streams are failed below; never start them on a later connect
        reject(serverStopped());
      };
      ws.onclose = (ev) => {
        socket = null;
        ready = null;
        // 1009: our message was too big. Anything else (1006 abnormal, 1001 going away) is the host gone.
        if (ev.code === 1009) streams.failAll('stream connection closed: a message was over the size limit');
        else if (streams.open > 0) {
          serverStopped();
          streams.failAll(STOPPED, 'unavailable');
        }
      };
    });
    return ready;
  };

  // A new token: the open socket signed in with the old one, so the next stream connects afresh.
  onNewToken(() => {
    if (streams.open === 0) socket?.close();
  });

  const streams = new StreamClient(
    {
      send: (msg) => {
        if (socket) socket.send(JSON.stringify(msg));
        else {
          queue.push(msg);
          connect().catch(() => streams.failAll(STOPPED, 'unavailable'));
        }
      },
      onMessage: (r) => {
        receive = r;
      },
    },
    { maxMessageBytes: MAX_STREAM_MESSAGE_BYTES },
  );

  return {
    call: callOverHttp,
    stream: (method, input, onEvent) => streams.stream(method, input, onEvent),
  };
}

/** The window runs inside Electron (its preload exposed the API), not in a browser tab. */
export const inElectron = window.studio !== undefined;

export const studio: StudioApi = createClient(studioContract, window.studio ? bridgeLink(window.studio) : webLink());

/** What each part of the page holds unsaved (the editor, the Tests tab), by part. */
const unsaved = new Map<string, string>();

/** Tells the Electron window what `part` holds unsaved (null: nothing), so closing it asks first; the
 *  window is told the first part's subject while any part has one. Nothing to tell in a browser tab
 *  (beforeunload asks there). */
export function reportUnsaved(part: 'editor' | 'tests', subject: string | null): void {
  if (subject === null) unsaved.delete(part);
  else unsaved.set(part, subject);
  window.studioWindow?.setUnsaved(unsaved.values().next().value ?? null);
}
