// Errors written for people: the summary keeps what the service said (paths and field names included),
// log-like transport and dispatcher messages are rewritten, and every code gets a hint.
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../common/errors';
import { friendlyError, toUiError } from '../../../renderer/src/lib/shared/errors';

describe('friendlyError', () => {
  it('keeps a service message as the summary and adds the hint of its code', () => {
    const f = friendlyError({ code: 'not_found', message: 'no bundle at /tmp/nowhere' });
    expect(f.summary).toBe('no bundle at /tmp/nowhere');
    expect(f.hint).toMatch(/deleted, renamed or moved/);
  });

  it('rewrites the dispatcher’s schema failures, naming the field', () => {
    const f = friendlyError({
      code: 'invalid_input',
      message: 'adapters.merge: invalid input at "sources.0.weight": Expected number, received string',
    });
    expect(f.summary).toBe('The field “weight” of source 1 must be a number, not text.');
    expect(f.summary).not.toMatch(/adapters\.merge/);
    expect(friendlyError({ code: 'invalid_input', message: 'skills.get: invalid input: bad value' }).summary).toBe(
      'The request was not accepted: bad value',
    );
  });

  it('rewrites transport failures', () => {
    expect(friendlyError({ code: 'internal', message: 'stream connection closed' }).summary).toBe(
      'Lost the connection to the studio.',
    );
    expect(
      friendlyError({
        code: 'internal',
        message: 'stream connection closed: a message was over the size limit',
      }).summary,
    ).toBe('Lost the connection to the studio (a message was over the size limit).');
    expect(friendlyError({ code: 'internal', message: 'HTTP 502 from skills.list' }).summary).toBe(
      'The studio did not answer properly (HTTP 502).',
    );
    expect(friendlyError({ code: 'internal', message: 'ema.update: handler returned invalid output' }).summary).toBe(
      'The studio sent back a reply it should not have.',
    );
  });

  it('has a hint for every error code, and one for codes it does not know', () => {
    for (const code of ErrorCode.options) expect(friendlyError({ code, message: 'x' }).hint.length).toBeGreaterThan(10);
    expect(friendlyError({ code: 'teapot', message: 'x' }).hint).toBe(
      friendlyError({ code: 'internal', message: 'x' }).hint,
    );
    expect(friendlyError({ code: 'internal', message: '  ' }).summary).toBe('Something went wrong.');
  });

  it('toUiError keeps the envelope and describes anything else as internal', () => {
    expect(toUiError({ code: 'conflict', message: 'in use' })).toEqual({ code: 'conflict', message: 'in use' });
    expect(toUiError(new Error('boom'))).toEqual({ code: 'internal', message: 'boom' });
    expect(toUiError(42)).toEqual({ code: 'internal', message: '42' });
  });
});
