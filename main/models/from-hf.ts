// A bundle from a local Hugging Face checkpoint: the Python exporter (`python -m
// pskills_train.commands.from_hf` in training/.venv) with its arguments built in one place, for
// `pskills bundle create --from-hf` (stdio inherited) and the Models page (progress read from stderr).
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { StudioError } from '../../common/errors';
import type { ModelCreateProgress } from '../../common/api/model-schemas';
import { APP_ROOT } from '../paths';
import { requireTrainingPython } from '../training-venv';

export interface FromHfOptions {
  from: string;
  out: string;
  dtype?: string;
  loraTargets?: readonly string[];
  encoderLayer?: number;
  /** none | init | a hyper/train.py checkpoint file */
  hypernet?: string;
  hyperConfig?: string;
  chatTemplate?: string;
  id?: string;
  force?: boolean;
  /** BATCHxLENGTH,… or none (default: the importer's, by train-step kind) */
  trainStepBuckets?: string;
}

export function fromHfArgs(o: FromHfOptions): string[] {
  const args = ['-m', 'pskills_train.commands.from_hf', '--from-hf', o.from, '--out', o.out];
  args.push('--dtype', o.dtype ?? 'fp32');
  if (o.loraTargets) args.push('--lora-targets', o.loraTargets.join(','));
  if (o.encoderLayer !== undefined) args.push('--encoder-layer', String(o.encoderLayer));
  args.push('--hypernet', o.hypernet ?? 'none');
  if (o.hyperConfig) args.push('--hyper-config', o.hyperConfig);
  if (o.chatTemplate) args.push('--chat-template', o.chatTemplate);
  if (o.id) args.push('--id', o.id);
  if (o.force) args.push('--force');
  if (o.trainStepBuckets) args.push('--train-step-buckets', o.trainStepBuckets);
  return args;
}

const PROGRESS = /^\[(\d+)\/(\d+)\] (.+)$/;
const ERROR = /^error: (.+)$/;
const KEEP_LINES = 20;

/**
 * Runs the exporter with piped output: `[n/N] what` lines become progress, `error: …` the thrown
 * message (invalid_input: the checkpoint or an option is wrong). On abort the exporter gets SIGINT,
 * so its staging folder is removed before it exits (nothing half-written is left).
 */
export function runFromHf(
  opts: FromHfOptions,
  ctx: { signal: AbortSignal; onProgress(p: ModelCreateProgress): void },
): Promise<void> {
  return runExporter(fromHfArgs(opts), { from: opts.from, out: opts.out }, ctx);
}

/** The exporter module in `args` run as runFromHf describes (also `from_gguf`: the same output lines). */
export async function runExporter(
  args: string[],
  opts: { from: string; out: string },
  ctx: { signal: AbortSignal; onProgress(p: ModelCreateProgress): void },
): Promise<void> {
  const python = requireTrainingPython();
  if (ctx.signal.aborted) throw cancelled(opts);
  const child = spawn(python, args, {
    cwd: APP_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let error: string | null = null;
  const tail: string[] = [];
  let pending = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    const lines = (pending + chunk).split(/\r?\n|\r/);
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const p = PROGRESS.exec(line);
      if (p) ctx.onProgress({ step: Number(p[1]), steps: Number(p[2]), message: p[3]! });
      else if (ERROR.test(line)) error = ERROR.exec(line)![1]!;
      else if (line.trim()) {
        tail.push(line);
        if (tail.length > KEEP_LINES) tail.shift();
      }
    }
  });
  const stop = () => child.kill('SIGINT');
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    const code = await new Promise<number>((done, fail) => {
      child.once('error', (err) => fail(new StudioError('internal', `could not start ${python}: ${err.message}`)));
      child.once('close', (c, signal) => done(c ?? (signal ? 130 : 1)));
    });
    if (ctx.signal.aborted) {
      // Finished before the signal arrived: the folder goes too, so a cancel never leaves a bundle.
      if (code === 0) await rm(opts.out, { recursive: true, force: true });
      throw cancelled(opts);
    }
    if (code === 0) return;
    if (error) throw new StudioError('invalid_input', error);
    // A crash (a traceback): its last lines say what broke, and the UI shows only the message.
    const last = tail.slice(-2).join(' / ');
    throw new StudioError('internal', `the bundle exporter exited with status ${code}${last ? `: ${last}` : ''}`, {
      stderr: tail.join('\n'),
    });
  } finally {
    ctx.signal.removeEventListener('abort', stop);
  }
}

const cancelled = (o: { from: string; out: string }) =>
  new StudioError('cancelled', `bundle create from ${o.from} cancelled; nothing was written to ${o.out}`);
