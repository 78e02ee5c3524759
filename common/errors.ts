// The one error shape that crosses every transport (IPC, HTTP, WebSocket, in-memory).
import { z } from 'zod';

export const ErrorCode = z.enum([
  'invalid_input', // payload failed its zod schema; the service was not called
  'not_found',
  'conflict',
  'bad_skill', // SKILL.md could not be parsed or validated
  'import_failed',
  'cancelled',
  'unauthorized',
  'forbidden', // wrong sender frame or origin
  'unavailable', // the client could not reach the studio (the web host stopped); never sent by a server
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorEnvelope = z.object({
  code: ErrorCode,
  message: z.string(),
  details: z.unknown().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** Thrown by services and by transports; serialised as an ErrorEnvelope. */
export class StudioError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'StudioError';
  }

  toEnvelope(): ErrorEnvelope {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }

  static from(envelope: ErrorEnvelope): StudioError {
    return new StudioError(envelope.code, envelope.message, envelope.details);
  }
}

export function toEnvelope(err: unknown): ErrorEnvelope {
  if (err instanceof StudioError) return err.toEnvelope();
  if (err instanceof Error && err.name === 'AbortError') return { code: 'cancelled', message: 'cancelled' };
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'internal', message };
}
