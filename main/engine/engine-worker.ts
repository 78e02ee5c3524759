// Worker entry (worker_threads): the only place a bundle's sessions open in the studio. It compiles,
// generates and distills, because onnxruntime-node runs a session synchronously on the calling thread
// (its backend defers the native run with setImmediate), so an encoder run or a decode step in the
// main process stalls its event loop. Messages: open, close, compile / generate / distill / time-step
// (progress or tokens, then a result or an error) and cancel. Adapters cross as WireAdapters.
import { parentPort } from 'node:worker_threads';
import type { EngineAdapter } from './adapter';
import { AdapterTable } from './adapter-table';
import { engineFromWire, engineToWire, toWire, wireBuffers, type WireAdapter } from './adapter-wire';
import { loadBundle, type Bundle, type ProviderInfo } from './bundle';
import { compileFactors, type CompiledSkill } from './compile';
import { timeTrainStep, type DistillProgress, type DistillResult } from './distill';
import { distillParts, type DistillPart } from './distill-parts';
import { generateBatch, type GenerateRequest, type RowResult, type RowTokenEvent } from './generate';
import type { Provider } from './ort';
import type { Bucket } from './train-step';

export interface BundleRef {
  token: number;
  dir: string;
  provider: Provider;
  intraOpNumThreads?: number;
}

/** A request's adapter by id; its factors travel only when the worker does not hold that id. */
export type WireRequest = Omit<GenerateRequest, 'adapter'> & { adapter: { id: number; wire?: WireAdapter } | null };

export type EngineRequest =
  | { type: 'open'; id: number; bundle: BundleRef }
  | { type: 'close'; id: number; token: number }
  | { type: 'compile'; id: number; bundle: BundleRef; text: string }
  | { type: 'generate'; id: number; bundle: BundleRef; requests: WireRequest[] }
  | {
      type: 'distill';
      id: number;
      bundle: BundleRef;
      /** One part per skill: each part's rows are answered with its own skill in context. */
      parts: DistillPart[];
      init: WireAdapter | null;
      options: { steps?: number; lr?: number; seed?: number; maxAnswerTokens?: number; roundTrip?: boolean };
    }
  | { type: 'time-step'; id: number; bundle: BundleRef; bucket: Bucket }
  | { type: 'cancel'; id: number };

export type CompiledOffThread = Omit<CompiledSkill, 'engine' | 'adapter'> & { adapter: WireAdapter };
export type DistilledOffThread = Omit<DistillResult, 'adapter'> & { adapter: WireAdapter };

export type EngineReply =
  | { type: 'opened'; id: number; provider: ProviderInfo }
  /** A line of the engine's log (id 0: no job), said by the main thread's logger. */
  | { type: 'log'; id: 0; message: string }
  | { type: 'progress'; id: number; chunk: number; chunks: number; tokens: number }
  | { type: 'token'; id: number; event: RowTokenEvent }
  | { type: 'compiled'; id: number; value: CompiledOffThread }
  | { type: 'generated'; id: number; value: RowResult[] }
  | { type: 'distill-progress'; id: number; progress: DistillProgress }
  | { type: 'distilled'; id: number; value: DistilledOffThread }
  | { type: 'step-timed'; id: number; seconds: number }
  | { type: 'error'; id: number; error: { name: string; code?: string; message: string; details?: unknown } };

const port = parentPort;
if (!port) throw new Error('engine-worker.ts runs as a worker_threads worker, not as a script');
const post = (m: EngineReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

/** The bundles by the client's token, with the jobs using each: a closed one is disposed when its last
 *  job ends (a chat may still stream on the bundle a load replaced). */
interface Held {
  readonly bundle: Promise<Bundle>;
  jobs: number;
  closed: boolean;
}
const held = new Map<number, Held>();
const running = new Map<number, AbortController>();
const logger = (message: string) => post({ type: 'log', id: 0, message });
const adapters = new AdapterTable<EngineAdapter>();

/** A job's hold on its bundle, loaded on first use. A token first seen in a job (not opened) replaces
 *  the other bundles: callers that never open or close one keep one bundle at a time. */
function acquire({ token, dir, provider, intraOpNumThreads }: BundleRef, replace: boolean): Held {
  let h = held.get(token);
  if (!h) {
    if (replace) for (const t of [...held.keys()]) close(t);
    // The main thread verified the files when it read this bundle.
    const bundle = loadBundle(dir, { provider, intraOpNumThreads, verifyHashes: false, logger });
    const entry: Held = (h = { bundle, jobs: 0, closed: false });
    held.set(token, entry);
    bundle.catch(() => held.get(token) === entry && held.delete(token));
  }
  h.jobs++;
  return h;
}

function release(h: Held): void {
  if (--h.jobs === 0 && h.closed) void h.bundle.then((x) => x.dispose()).catch(() => undefined);
}

function close(token: number): void {
  const h = held.get(token);
  if (!h) return;
  held.delete(token);
  h.closed = true;
  h.jobs++;
  release(h);
}

/** Taken as the message arrives, in the client's order (adapter-table.ts). */
function adapterOf(wire: WireRequest['adapter']): EngineAdapter | null {
  if (!wire) return null;
  if (wire.wire) adapters.put(wire.id, engineFromWire(wire.wire));
  const kept = adapters.use(wire.id);
  if (!kept) throw new Error(`engine worker: adapter ${wire.id} was neither sent nor kept`);
  return kept;
}

async function open(m: Extract<EngineRequest, { type: 'open' }>, b: Promise<Bundle>): Promise<void> {
  post({ type: 'opened', id: m.id, provider: (await b).provider });
}

async function compile(
  m: Extract<EngineRequest, { type: 'compile' }>,
  signal: AbortSignal,
  b: Promise<Bundle>,
): Promise<void> {
  const bundle = await b;
  const { adapter, ...rest } = await compileFactors(bundle, m.text, {
    signal,
    onProgress: (p) => post({ type: 'progress', id: m.id, ...p }),
  });
  const wire = toWire(adapter.rank, adapter.targets); // α = rank: already folded
  post({ type: 'compiled', id: m.id, value: { ...rest, adapter: wire } }, wireBuffers(wire));
}

async function generate(
  m: Extract<EngineRequest, { type: 'generate' }>,
  signal: AbortSignal,
  b: Promise<Bundle>,
  rows: (EngineAdapter | null)[],
): Promise<void> {
  const bundle = await b;
  const requests = m.requests.map((r, i) => ({ ...r, adapter: rows[i] ?? null }));
  const it = generateBatch(bundle, requests, { signal });
  for (;;) {
    const next = await it.next();
    if (next.done) return post({ type: 'generated', id: m.id, value: next.value });
    post({ type: 'token', id: m.id, event: next.value });
  }
}

async function distill(
  m: Extract<EngineRequest, { type: 'distill' }>,
  signal: AbortSignal,
  b: Promise<Bundle>,
): Promise<void> {
  const bundle = await b;
  const { adapter, ...rest } = await distillParts(bundle, m.parts, {
    ...m.options,
    init: m.init && engineFromWire(m.init),
    signal,
    onProgress: (progress) => post({ type: 'distill-progress', id: m.id, progress }),
  });
  const wire = engineToWire(adapter);
  post({ type: 'distilled', id: m.id, value: { ...rest, adapter: wire } }, wireBuffers(wire));
}

async function timeStep(m: Extract<EngineRequest, { type: 'time-step' }>, b: Promise<Bundle>): Promise<void> {
  const bundle = await b;
  post({ type: 'step-timed', id: m.id, seconds: await timeTrainStep(bundle, m.bucket) });
}

type Job = Exclude<EngineRequest, { type: 'cancel' | 'close' }>;

async function job(m: Job, signal: AbortSignal, rows: (EngineAdapter | null)[], b: Promise<Bundle>): Promise<void> {
  switch (m.type) {
    case 'open':
      return open(m, b);
    case 'compile':
      return compile(m, signal, b);
    case 'generate':
      return generate(m, signal, b, rows);
    case 'distill':
      return distill(m, signal, b);
    case 'time-step':
      return timeStep(m, b);
  }
}

function fail(id: number, err: unknown): void {
  const e = err as Error & { code?: string; details?: unknown };
  post({ type: 'error', id, error: { name: e.name, code: e.code, message: e.message, details: e.details } });
}

port.on('message', (m: EngineRequest) => {
  if (m.type === 'cancel') return running.get(m.id)?.abort();
  if (m.type === 'close') return close(m.token);
  let rows: (EngineAdapter | null)[] = [];
  try {
    if (m.type === 'generate') rows = m.requests.map((r) => adapterOf(r.adapter)); // now, in message order
  } catch (err) {
    return fail(m.id, err);
  }
  const ctl = new AbortController();
  running.set(m.id, ctl);
  const h = acquire(m.bundle, m.type !== 'open');
  job(m, ctl.signal, rows, h.bundle)
    .catch((err: unknown) => fail(m.id, err))
    .finally(() => {
      running.delete(m.id);
      release(h);
    });
});
