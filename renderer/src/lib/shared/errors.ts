// One shape for every failure the UI shows: the StudioError envelope (code + message) when the API
// sent one, otherwise the thrown value described as an internal error. Nothing is swallowed.
import { issueSentence } from './field-words';

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

/** What a person reads: a sentence about what went wrong, and what to try. The code and the raw
 *  message stay available for the "Details" disclosure. */
export interface FriendlyError {
  summary: string;
  hint: string;
}

/** What to try next, per error code. */
const HINTS: Record<string, string> = {
  invalid_input: 'Check the value named above and try again.',
  not_found: 'It may have been deleted, renamed or moved. Check the name or path.',
  conflict: 'Something else depends on it or changed it meanwhile. Resolve that first, then try again.',
  bad_skill: 'Fix the SKILL.md at the line named above, then save again.',
  import_failed: 'Check that the source exists and is a folder, a .tgz archive or an npm package name.',
  cancelled: 'It stopped because it was cancelled.',
  unauthorized:
    'This tab is not signed in to the studio. Paste the address the studio server printed (studio: http://127.0.0.1:…) into this tab.',
  forbidden: 'The request came from a window or page the studio does not trust, so it was refused.',
  internal: 'Something unexpected went wrong inside the studio. The details below help a bug report.',
  unavailable:
    'Start the studio server again (npm start -- --port PORT, or npx pskills serve --port PORT, keeps this address), then press Retry at the top of the page.',
};

/** Messages from the transport or the dispatcher that read like logs, rewritten. */
const REWRITES: ReadonlyArray<[RegExp, (m: RegExpMatchArray) => string]> = [
  [/^the studio server stopped or cannot be reached$/, () => 'The studio server stopped.'],
  [
    /^stream connection (?:failed|closed)(?:: (.*))?$/,
    (m) => `Lost the connection to the studio${m[1] ? ` (${m[1]})` : ''}.`,
  ],
  [/^HTTP (\d+) from [\w.]+$/, (m) => `The studio did not answer properly (HTTP ${m[1]}).`],
  [
    /^[\w]+\.[\w]+: handler returned invalid (?:output|result)$/,
    () => 'The studio sent back a reply it should not have.',
  ],
  // The dispatcher's zod failures, as the field in words and a sentence (field-words.ts).
  [/^[\w]+\.[\w]+: invalid input at "([^"]+)": (.*)$/s, (m) => issueSentence(m[1]!, m[2]!)],
  [/^[\w]+\.[\w]+: invalid input: (.*)$/s, (m) => issueSentence('', m[1]!)],
];

export function friendlyError(error: UiError): FriendlyError {
  const message = error.message.trim();
  let summary = message || 'Something went wrong.';
  for (const [pattern, rewrite] of REWRITES) {
    const m = message.match(pattern);
    if (m) {
      summary = rewrite(m);
      break;
    }
  }
  return { summary, hint: HINTS[error.code] ?? HINTS.internal! };
}
