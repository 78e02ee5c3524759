// The GGUF gate off the main thread: one header at a time (main/models/gguf-reader.ts posts them), so
// a folder scan never holds the event loop the web host answers on (docs/security.md "GGUF files").
import { parentPort } from 'node:worker_threads';
import { GateError } from '../files/read-gate';
import { inspectGguf, type GgufInspection } from './gguf';

export interface GgufRequest {
  id: number;
  path: string;
  budgetMs: number;
}

export type GgufReply =
  | { id: number; ok: true; inspection: GgufInspection }
  | { id: number; ok: false; gate: boolean; missing: boolean; reason: string; message: string };

parentPort!.on('message', (req: GgufRequest) => {
  let reply: GgufReply;
  try {
    reply = { id: req.id, ok: true, inspection: inspectGguf(req.path, { budgetMs: req.budgetMs }) };
  } catch (e) {
    const gate = e instanceof GateError;
    reply = {
      id: req.id,
      ok: false,
      gate,
      missing: gate && e.code === 'not_found',
      reason: gate ? e.reason : e instanceof Error ? e.message : String(e),
      message: e instanceof Error ? e.message : String(e),
    };
  }
  parentPort!.postMessage(reply);
});
