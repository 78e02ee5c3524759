// Worker entry (worker_threads): compiles skills and generates with its own sessions of the bundle,
// because onnxruntime-node runs a session synchronously on the calling thread (its backend defers the
// native run with setImmediate), so an encoder run or a decode step in the main process stalls its
// event loop. Messages: compile / generate (progress or tokens, then done or error) and cancel.
import { parentPort } from 'node:worker_threads';
import { ownedBuffers } from '../threads';
import type { EngineAdapter } from './adapter';
import { loadBundle, type Bundle } from './bundle';
import { compileSkill, type CompiledSkill } from './compile';
import { distillSkill, timeTrainStep, type DistillProgress, type DistillResult } from './distill';
import { generateBatch, type GenerateRequest, type RowResult, type RowTokenEvent } from './generate';
import type { Provider } from './ort';
import type { Bucket } from './train-step';
import type { PracticeQuestion } from '../../common/distill/practice';

export interface BundleRef {
  token: number;
  dir: string;
  provider: Provider;
}

/** A request's adapter travels with an id, so the worker keeps one copy per adapter (and the engine's
 *  packed LoRA feeds, cached per adapter object, are built once). */
export type WireRequest = Omit<GenerateRequest, 'adapter'> & { adapter: { id: number; value: EngineAdapter } | null };

export type EngineRequest =
  | { type: 'compile'; id: number; bundle: BundleRef; text: string }
  | { type: 'generate'; id: number; bundle: BundleRef; requests: WireRequest[] }
  | {
      type: 'distill';
      id: number;
      bundle: BundleRef;
      skill: string;
      questions: PracticeQuestion[];
      init: EngineAdapter | null;
      options: { steps?: number; lr?: number; seed?: number; maxAnswerTokens?: number };
    }
  | { type: 'time-step'; id: number; bundle: BundleRef; bucket: Bucket }
  | { type: 'cancel'; id: number };

export type CompiledOffThread = Omit<CompiledSkill, 'engine'>;

export type EngineReply =
  | { type: 'progress'; id: number; chunk: number; chunks: number; tokens: number }
  | { type: 'token'; id: number; event: RowTokenEvent }
  | { type: 'compiled'; id: number; value: CompiledOffThread }
  | { type: 'generated'; id: number; value: RowResult[] }
  | { type: 'distill-progress'; id: number; progress: DistillProgress }
  | { type: 'distilled'; id: number; value: DistillResult }
  | { type: 'step-timed'; id: number; seconds: number }
  | { type: 'error'; id: number; error: { name: string; code?: string; message: string; details?: unknown } };

const port = parentPort;
if (!port) throw new Error('engine-worker.ts runs as a worker_threads worker, not as a script');
const post = (m: EngineReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

/** One bundle at a time: the main process's current one (a new token disposes the older ones). */
const bundles = new Map<number, Promise<Bundle>>();
const running = new Map<number, AbortController>();
const ADAPTERS_KEPT = 16;
const adapters = new Map<number, EngineAdapter>();

function bundleFor({ token, dir, provider }: BundleRef): Promise<Bundle> {
  let b = bundles.get(token);
  if (b) return b;
  for (const [t, old] of bundles) {
    bundles.delete(t);
    void old.then((x) => x.dispose()).catch(() => undefined);
  }
  // The main process verified the files when it loaded this bundle.
  b = loadBundle(dir, { provider, verifyHashes: false });
  bundles.set(token, b);
  b.catch(() => bundles.delete(token));
  return b;
}

function adapterOf(wire: WireRequest['adapter']): EngineAdapter | null {
  if (!wire) return null;
  const kept = adapters.get(wire.id) ?? wire.value;
  adapters.delete(wire.id); // re-insert as the newest
  adapters.set(wire.id, kept);
  if (adapters.size > ADAPTERS_KEPT) adapters.delete(adapters.keys().next().value!);
  return kept;
}

async function compile(m: Extract<EngineRequest, { type: 'compile' }>, signal: AbortSignal): Promise<void> {
  const bundle = await bundleFor(m.bundle);
  const { engine: _engine, ...value } = await compileSkill(bundle, m.text, {
    signal,
    onProgress: (p) => post({ type: 'progress', id: m.id, ...p }),
  });
  post({ type: 'compiled', id: m.id, value }, ownedBuffers(value.adapter));
}

async function generate(m: Extract<EngineRequest, { type: 'generate' }>, signal: AbortSignal): Promise<void> {
  const bundle = await bundleFor(m.bundle);
  const requests = m.requests.map((r) => ({ ...r, adapter: adapterOf(r.adapter) }));
  const it = generateBatch(bundle, requests, { signal });
  for (;;) {
    const next = await it.next();
    if (next.done) return post({ type: 'generated', id: m.id, value: next.value });
    post({ type: 'token', id: m.id, event: next.value });
  }
}

async function distill(m: Extract<EngineRequest, { type: 'distill' }>, signal: AbortSignal): Promise<void> {
  const bundle = await bundleFor(m.bundle);
  const value = await distillSkill(bundle, m.skill, m.questions, {
    ...m.options,
    init: m.init,
    signal,
    onProgress: (progress) => post({ type: 'distill-progress', id: m.id, progress }),
  });
  post({ type: 'distilled', id: m.id, value });
}

async function timeStep(m: Extract<EngineRequest, { type: 'time-step' }>): Promise<void> {
  const bundle = await bundleFor(m.bundle);
  post({ type: 'step-timed', id: m.id, seconds: await timeTrainStep(bundle, m.bucket) });
}

const JOBS = { compile, generate, distill, 'time-step': timeStep } as const;

port.on('message', (m: EngineRequest) => {
  if (m.type === 'cancel') return running.get(m.id)?.abort();
  const ctl = new AbortController();
  running.set(m.id, ctl);
  (JOBS[m.type] as (req: typeof m, signal: AbortSignal) => Promise<void>)(m, ctl.signal)
    .catch((err: unknown) => {
      const e = err as Error & { code?: string; details?: unknown };
      post({ type: 'error', id: m.id, error: { name: e.name, code: e.code, message: e.message, details: e.details } });
    })
    .finally(() => running.delete(m.id));
});
