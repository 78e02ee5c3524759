// Messages of the streaming wire protocol (WebSocket and the in-memory pair).
import { z } from 'zod';
import { ErrorEnvelope } from '../errors';

/** Largest WebSocket message the web host accepts; the server closes a socket (1009) that sends more. */
export const MAX_STREAM_MESSAGE_BYTES = 2 * 1024 * 1024;

export const ClientMessage = z.discriminatedUnion('t', [
  z.object({ t: z.literal('start'), id: z.string().min(1).max(64), method: z.string().max(100), input: z.unknown() }),
  z.object({ t: z.literal('cancel'), id: z.string().min(1).max(64) }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const ServerMessage = z.discriminatedUnion('t', [
  z.object({ t: z.literal('event'), id: z.string(), event: z.unknown() }),
  z.object({ t: z.literal('ok'), id: z.string(), value: z.unknown() }),
  z.object({ t: z.literal('err'), id: z.string(), error: ErrorEnvelope }),
]);
export type ServerMessage = z.infer<typeof ServerMessage>;

/** Result of a request/response call as it travels (IPC and HTTP bodies). */
export type CallOutcome = { ok: true; value: unknown } | { ok: false; error: ErrorEnvelope };
