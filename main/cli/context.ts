// What every pskills command gets: where to print, how to open the studio, and the flag parsers.
// One object, built once by the entry point (index.ts) or by a test, passed to each command's run.
import { resolve } from 'node:path';
import { studioContract, type StudioApi } from '../../common/api/contract';
import type { StreamHandle } from '../../common/api/define';
import { createStudio, type Studio } from '../api/root';
import { directClient } from '../api/transports/direct';
import { defaultDataDir } from '../paths';
import { parse, parseInteger, parseNumber, parseProvider, parseSkillRef } from './args';

export interface Io {
  /** One line on stdout. */
  out(line: string): void;
  /** One line on stderr. */
  err(line: string): void;
  /** Streamed text on stdout, no newline added (generated tokens). */
  write(text: string): void;
}

/** The flags that choose the studio: every command takes --data-dir, some --bundle. */
export interface StudioFlags {
  'data-dir'?: string;
  bundle?: string;
  /** Execution provider for the bundles this run loads (overrides the executionProvider setting). */
  provider?: string;
}

export interface OpenStudio {
  studio: Studio;
  api: StudioApi;
}

export interface CliContext {
  io: Io;
  flags: {
    parse: typeof parse;
    number: typeof parseNumber;
    integer: typeof parseInteger;
    skillRef: typeof parseSkillRef;
  };
  /** The studio on --data-dir (default: the studio's user-data folder); the caller disposes it. */
  openStudio(values: StudioFlags): OpenStudio;
  /** The data folder --data-dir names (default: the studio's user-data folder), without opening it. */
  dataDir(values: StudioFlags): string;
  /** openStudio, then --bundle loaded when given, then `f`; the studio is disposed afterwards. */
  withStudio<T>(values: StudioFlags, f: (api: StudioApi, studio: Studio) => Promise<T>): Promise<T>;
  /** Ctrl-C calls `cancel` until the returned function is called. */
  onInterrupt(cancel: () => void): () => void;
  /** A stream's result; Ctrl-C cancels the stream meanwhile. */
  untilDone<T>(handle: StreamHandle<T>): Promise<T>;
}

function onInterrupt(cancel: () => void): () => void {
  const handler = () => cancel();
  process.once('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

export function createContext(io: Io, dataDir: () => string = defaultDataDir): CliContext {
  const dataDirOf = (values: StudioFlags): string => (values['data-dir'] ? resolve(values['data-dir']) : dataDir());
  const openStudio = (values: StudioFlags): OpenStudio => {
    const provider = values.provider === undefined ? undefined : parseProvider(values.provider);
    const studio = createStudio({
      dataDir: dataDirOf(values),
      ...(provider ? { provider } : {}),
    });
    return { studio, api: directClient(studioContract, studio.dispatcher) };
  };
  return {
    io,
    flags: { parse, number: parseNumber, integer: parseInteger, skillRef: parseSkillRef },
    openStudio,
    dataDir: dataDirOf,
    async withStudio(values, f) {
      const { studio, api } = openStudio(values);
      try {
        if (values.bundle) await api.engine.loadBundle({ dir: resolve(values.bundle) });
        return await f(api, studio);
      } finally {
        await studio.dispose();
      }
    },
    onInterrupt,
    async untilDone(handle) {
      const off = onInterrupt(() => handle.cancel());
      try {
        return await handle.result;
      } finally {
        off();
      }
    },
  };
}
