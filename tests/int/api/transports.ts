// The two ways a test reaches the real StudioApi: the in-memory pair and the web host (HTTP + WebSocket).
// Suites run `describe.each(transports)` so every method is checked over both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { studioContract, type StudioApi } from '../../../common/api/contract';
import { StudioError } from '../../../common/errors';
import { createStudio, type Studio, type StudioOptions } from '../../../main/api/root';
import { directClient } from '../../../main/api/transports/direct';
import { memoryPair } from '../../unit/api/memory-pair';
import { startWebHost } from '../../../main/api/transports/web-host';
import { webClient } from './web-client';

export type Opened = { api: StudioApi; close(): Promise<void> | void };

/** How a suite reaches the studio; `Extra` is what else it hands the suite (a web host's ends). */
export type Transport<Extra extends object = Record<never, never>> = {
  name: string;
  /** `dataDir`: the studio's data folder, for a transport that serves files beside the library. */
  open(studio: Studio, dataDir: string): Promise<Opened & Extra>;
};

/** The in-memory pair: what a suite that is not about transports uses. */
export const memory: Transport = { name: 'memory', open: async (s) => memoryPair(studioContract, s.dispatcher) };

/** Calls straight into the dispatcher, no wire between (the CLI's way). */
export const direct: Transport = {
  name: 'direct',
  open: async (s) => ({ api: directClient(studioContract, s.dispatcher), close() {} }),
};

export const transports: Transport[] = [
  memory,
  {
    name: 'web host',
    open: async (s) => {
      const host = await startWebHost({ dispatcher: s.dispatcher, staticDir: null });
      const c = await webClient(host.origin, host.token);
      return { api: c.api, close: async () => (c.close(), await host.close()) };
    },
  },
];

/** Where a web host listens and the token it admits. */
export interface HostEnds {
  readonly origin: string;
  readonly token: string;
}

/** A web host with the studio's own HTTP routes mounted (the OpenAI-compatible `/v1` endpoint), for
 * suites about those routes: they fetch `origin` with `token`. The StudioApi beside them is reached
 * over `inner` (default: straight into the dispatcher). */
export const withRoutes = (inner: Transport = direct): Transport<HostEnds> => ({
  name: `web host with routes, api over ${inner.name}`,
  open: async (s, dataDir) => {
    const host = await startWebHost({ dispatcher: s.dispatcher, staticDir: null, routes: s.routes });
    const opened = await inner.open(s, dataDir);
    return {
      api: opened.api,
      origin: host.origin,
      token: host.token,
      close: async () => {
        await opened.close();
        await host.close();
      },
    };
  },
});

/** The StudioError a promise rejects with (code, message and details survive either transport). */
export const failure = (p: Promise<unknown>): Promise<StudioError> =>
  p.then(
    () => expect.fail('expected an error'),
    (e: unknown) => {
      expect(e).toBeInstanceOf(StudioError);
      return e as StudioError;
    },
  );

export interface StudioSuite {
  readonly dataDir: string;
  readonly studio: Studio;
  readonly api: StudioApi;
  /** Closes the transport and the studio, once: a CLI test may need the data folder to itself. */
  close(): Promise<void>;
}

/** createStudio on `dataDir` (default bundle: none unless named), reached over `transport`. */
async function openStudio<Extra extends object>(
  transport: Transport<Extra>,
  dataDir: string,
  options: Partial<StudioOptions>,
): Promise<StudioSuite & Extra> {
  const studio = createStudio({ defaultBundleDir: null, ...options, dataDir });
  const opened = await transport.open(studio, dataDir);
  let closed: Promise<void> | undefined;
  const close = async () => (await opened.close(), await studio.dispose());
  return { ...opened, dataDir, studio, close: () => (closed ??= close()) };
}

/** A studio on a fresh data folder reached over `transport`, opened before the suite's tests and
 * closed and removed after them; `options` as createStudio's (default bundle: none unless named).
 * Whatever else the transport hands over (a web host's `origin` and `token`) is on the suite too.
 * Read its fields inside tests. */
export function studioSuite<Extra extends object = Record<never, never>>(
  transport: Transport<Extra>,
  prefix: string,
  options: Omit<StudioOptions, 'dataDir'> = {},
): StudioSuite & Extra {
  const s = {} as StudioSuite & Extra;
  beforeAll(
    async () => void Object.assign(s, await openStudio(transport, mkdtempSync(join(tmpdir(), prefix)), options)),
  );
  afterAll(async () => {
    await s.close();
    rmSync(s.dataDir, { recursive: true, force: true });
  });
  return s;
}

/** A studio for one test, where a suite-long studioSuite does not fit: a fresh library per call, or
 * (`options.dataDir`) a restart on a folder that exists, such as one a CLI wrote, which is kept. The
 * fresh folder is removed, and the studio closed, once `use` is done. */
export async function withStudio<T>(
  use: (s: StudioSuite) => Promise<T>,
  options: Partial<StudioOptions> = {},
  transport: Transport = memory,
): Promise<T> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'pskills-studio-'));
  const s = await openStudio(transport, dataDir, options);
  try {
    return await use(s);
  } finally {
    await s.close();
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
