// A stream start too big for the socket fails that stream with a clear error before anything is sent;
// sending it would make the server close the shared socket (1009) and fail every other stream too.
import { describe, expect, it } from 'vitest';
import { StreamClient } from '../../../common/api/message-link';
import { MAX_STREAM_MESSAGE_BYTES, type ClientMessage } from '../../../common/api/wire';
import { StudioError } from '../../../common/errors';

describe('StreamClient message size', () => {
  it('refuses a start message over the limit, sends nothing, and keeps other streams', async () => {
    const sent: ClientMessage[] = [];
    const client = new StreamClient(
      { send: (m) => sent.push(m), onMessage: () => {} },
      { maxMessageBytes: MAX_STREAM_MESSAGE_BYTES },
    );
    const noise = '\u0001'.repeat(190_000); // JSON escapes each to six bytes: ~2.3 MB
    const big = client.stream(
      'engine.generate',
      {
        messages: [
          { role: 'user', content: noise },
          { role: 'system', content: noise },
        ],
      },
      () => {},
    );
    const err = (await big.result.catch((e: unknown) => e)) as StudioError;
    expect(err).toBeInstanceOf(StudioError);
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(
      /engine\.generate: the request is 2,2\d\d,\d{3} bytes; a stream message may have at most 2,097,152/,
    );
    expect(sent).toEqual([]);
    client.stream('engine.generate', { prompt: 'hi' }, () => {});
    expect(sent).toHaveLength(1);
  });
});
