// Cancellation: every long step checks the signal and throws an Error named 'AbortError', which the
// transports map to the 'cancelled' envelope (common/errors.ts).

export function abortError(): Error {
  const e = new Error('import cancelled');
  e.name = 'AbortError';
  return e;
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError();
}
