// The two ways a test reaches the real StudioApi: the in-memory pair and the web host (HTTP + WebSocket).
// Suites run `describe.each(transports)` so every method is checked over both.
import { expect } from 'vitest';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { StudioError } from '../../../common/errors';
import type { Studio } from '../../../main/api/root';
import { memoryPair } from '../../../main/api/transports/memory';
import { startWebHost } from '../../../main/api/transports/web-host';
import { webClient } from './web-client';

export type Transport = {
  name: string;
  open(studio: Studio): Promise<{ api: StudioApi; close(): Promise<void> | void }>;
};

export const transports: Transport[] = [
  { name: 'memory', open: async (s) => memoryPair(studioContract, s.dispatcher) },
  {
    name: 'web host',
    open: async (s) => {
      const host = await startWebHost({ dispatcher: s.dispatcher, staticDir: null });
      const c = await webClient(host.origin, host.token);
      return { api: c.api, close: async () => (c.close(), await host.close()) };
    },
  },
];

/** The StudioError a promise rejects with (code, message and details survive either transport). */
export const failure = (p: Promise<unknown>): Promise<StudioError> =>
  p.then(
    () => expect.fail('expected an error'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(StudioError);
      return e as StudioError;
    },
  );
