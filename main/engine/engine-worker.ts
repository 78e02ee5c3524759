// Worker entry (worker_threads): compiles skills with its own sessions of the bundle, because
// onnxruntime-node runs a session synchronously on the calling thread (its backend defers the native
// run with setImmediate), so a compile in the main process stalls the event loop for a whole encoder
// run. Messages: compile (progress, then done or error) and cancel (checked between chunks).
import { parentPort } from 'node:worker_threads';
import { ownedBuffers } from '../threads';
import { loadBundle, type Bundle } from './bundle';
import { compileSkill, type CompiledSkill } from './compile';
import type { Provider } from './ort';

export type CompileRequest =
  | { type: 'compile'; id: number; bundle: { token: number; dir: string; provider: Provider }; text: string }
  | { type: 'cancel'; id: number };

export type CompiledOffThread = Omit<CompiledSkill, 'engine'>;

export type CompileReply =
  | { type: 'progress'; id: number; chunk: number; chunks: number; tokens: number }
  | { type: 'done'; id: number; value: CompiledOffThread }
  | { type: 'error'; id: number; error: { name: string; code?: string; message: string; details?: unknown } };

const port = parentPort;
if (!port) throw new Error('compile-worker.ts runs as a worker_threads worker, not as a script');

/** One bundle at a time: the main process's current one (a new token disposes the older ones). */
const bundles = new Map<number, Promise<Bundle>>();
const running = new Map<number, AbortController>();

function bundleFor({ token, dir, provider }: { token: number; dir: string; provider: Provider }): Promise<Bundle> {
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

async function compile(m: Extract<CompileRequest, { type: 'compile' }>): Promise<void> {
  const ctl = new AbortController();
  running.set(m.id, ctl);
  try {
    const bundle = await bundleFor(m.bundle);
    const { engine: _engine, ...value } = await compileSkill(bundle, m.text, {
      signal: ctl.signal,
      onProgress: (p) => port!.postMessage({ type: 'progress', id: m.id, ...p } satisfies CompileReply),
    });
    port!.postMessage({ type: 'done', id: m.id, value } satisfies CompileReply, ownedBuffers(value.adapter));
  } catch (err) {
    const e = err as Error & { code?: string; details?: unknown };
    const error = { name: e.name ?? 'Error', code: e.code, message: e.message ?? String(err), details: e.details };
    port!.postMessage({ type: 'error', id: m.id, error } satisfies CompileReply);
  } finally {
    running.delete(m.id);
  }
}

port.on('message', (m: CompileRequest) => {
  if (m.type === 'cancel') running.get(m.id)?.abort();
  else void compile(m);
});
