// One shape for every failure the UI shows: the StudioError envelope (code + message) when the API
// sent one, otherwise the thrown value described as an internal error. Nothing is swallowed.
export interface UiError {
  code: string;
  message: string;
}

export function toUiError(err: unknown): UiError {
  if (typeof err === 'object' && err !== null && 'code' in err && 'message' in err) {
    const { code, message } = err as { code: unknown; message: unknown };
    if (typeof code === 'string' && typeof message === 'string') return { code, message };
  }
  if (err instanceof Error) return { code: 'internal', message: err.message };
  return { code: 'internal', message: String(err) };
}
