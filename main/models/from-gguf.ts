// A bundle from a GGUF file (llama.cpp, LM Studio, Ollama): the Python importer (`python -m
// pskills_train.export.from_gguf` in training/.venv) with its arguments built in one place, for
// `pskills bundle create --from-gguf` (stdio inherited) and the Models page (progress read from stderr).
import type { ModelCreateProgress } from '../../common/api/model-schemas';
import { runExporter } from './from-hf';

export interface FromGgufOptions {
  file: string;
  /** default: the file's path without .gguf */
  out?: string;
  dtype?: string;
  loraTargets?: readonly string[];
  encoderLayer?: number;
  chatTemplate?: string;
  id?: string;
  force?: boolean;
  /** BATCHxLENGTH,… or none (default: the importer's, by train-step kind) */
  trainStepBuckets?: string;
}

export function fromGgufArgs(o: FromGgufOptions): string[] {
  const args = ['-m', 'pskills_train.export.from_gguf', o.file];
  if (o.out) args.push('--out', o.out);
  args.push('--dtype', o.dtype ?? 'fp32');
  if (o.loraTargets) args.push('--lora-targets', o.loraTargets.join(','));
  if (o.encoderLayer !== undefined) args.push('--encoder-layer', String(o.encoderLayer));
  if (o.chatTemplate) args.push('--chat-template', o.chatTemplate);
  if (o.id) args.push('--id', o.id);
  if (o.force) args.push('--force');
  if (o.trainStepBuckets) args.push('--train-step-buckets', o.trainStepBuckets);
  return args;
}

/** Runs the importer with progress and Cancel as runFromHf does (its staging folder goes on SIGINT). */
export function runFromGguf(
  opts: FromGgufOptions & { out: string },
  ctx: { signal: AbortSignal; onProgress(p: ModelCreateProgress): void },
): Promise<void> {
  return runExporter(fromGgufArgs(opts), { from: opts.file, out: opts.out }, ctx);
}
