// Worker entry (worker_threads): runs one ALGEBRA_OPS job per message and posts the result back with
// its typed arrays transferred. Errors travel as plain fields; algebra-client.ts rebuilds them.
import { parentPort } from 'node:worker_threads';
import { ownedBuffers } from '../threads';
import { ALGEBRA_OPS, type AlgebraOp } from './algebra-ops';
import { AdapterValidationError } from './validate';

export interface AlgebraRequest {
  id: number;
  op: AlgebraOp;
  arg: unknown;
}

export type AlgebraReply =
  | { id: number; ok: true; value: unknown }
  | {
      id: number;
      ok: false;
      error: { name: string; message: string; stack?: string; where?: object; why?: string };
    };

function errorFields(err: unknown): Extract<AlgebraReply, { ok: false }>['error'] {
  if (err instanceof AdapterValidationError)
    return { name: err.name, message: err.message, where: { ...err.where }, why: err.why };
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

const port = parentPort;
if (!port) throw new Error('algebra-worker.ts runs as a worker_threads worker, not as a script');
port.on('message', ({ id, op, arg }: AlgebraRequest) => {
  let reply: AlgebraReply;
  try {
    const run = ALGEBRA_OPS[op] as ((a: unknown) => unknown) | undefined;
    if (!run) throw new Error(`unknown adapter algebra op "${op}"`);
    reply = { id, ok: true, value: run(arg) };
  } catch (err) {
    reply = { id, ok: false, error: errorFields(err) };
  }
  port.postMessage(reply, reply.ok ? ownedBuffers(reply.value) : []);
});
