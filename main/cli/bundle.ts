// `pskills bundle create --from-hf | --from-gguf`: a model bundle from a local Hugging Face checkpoint
// or a GGUF file (Llama, Qwen2, Mistral), written by the Python exporter (`python -m
// pskills_train.commands.from_hf` / `from_gguf`) in the training venv; its progress and errors pass
// straight through.
import { existsSync, lstatSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import { LORA_MODULES } from '../../common/api/model-schemas';
import { fromHfArgs } from '../models/from-hf';
import { fromGgufArgs } from '../models/from-gguf';
import { inspectGguf } from '../models/gguf';
import type { Command } from './command';
import type { CliContext } from './context';
import { runTrainingModule } from '../training-venv';
import { usageError } from './usage';

const DTYPES = ['fp32', 'fp16'];
const MODULES: readonly string[] = LORA_MODULES;

export const bundleCreate: Command = {
  name: 'bundle create',
  usage:
    '(--from-hf DIR --out DIR | --from-gguf FILE [--out DIR]) [--dtype fp32|fp16] [--lora-targets q,k,v,o,gate,up,down] [--encoder-layer K] [--hypernet none|init|CKPT] [--hyper-config FILE] [--chat-template FILE] [--id ID] [--train-step-buckets BxS,…|none] [--force]',
  summary: 'a bundle from a local Llama / Qwen2 / Mistral checkpoint or GGUF file (training/.venv)',
  async run(argv, { io, flags }) {
    const { values, positionals } = flags.parse(argv, {
      'from-hf': { type: 'string' },
      'from-gguf': { type: 'string' },
      out: { type: 'string' },
      dtype: { type: 'string' },
      'lora-targets': { type: 'string' },
      'encoder-layer': { type: 'string' },
      hypernet: { type: 'string' },
      'hyper-config': { type: 'string' },
      'chat-template': { type: 'string' },
      id: { type: 'string' },
      'train-step-buckets': { type: 'string' },
      force: { type: 'boolean', default: false },
    });
    const gguf = values['from-gguf'];
    if (positionals.length || !values['from-hf'] === !gguf || (!gguf && !values.out)) throw usageError(bundleCreate);
    if (gguf && !lstatSync(resolve(gguf), { throwIfNoEntry: false }))
      throw new StudioError('not_found', `--from-gguf: ${resolve(gguf)}: no such file`);
    // A GGUF brings no hypernetwork and none is trained for a new base here: its skills compile by distillation.
    if (gguf && (values.hypernet || values['hyper-config']))
      throw new StudioError('invalid_input', '--hypernet and --hyper-config go with --from-hf only');
    // The GGUF gate before Python sees the file: a FIFO, a device or a header over its limits is
    // refused here, naming why (docs/security.md "GGUF files").
    // What the importer would refuse too (no or an unsupported architecture, a key it needs, a tensor it
    // does not build or dequantize) is refused here as well, as soon as the header shows it (`early`),
    // before Python and torch start (seconds, 300 MB), as models.create does.
    if (gguf) {
      let problem: string | null;
      try {
        ({ problem } = inspectGguf(resolve(gguf), { early: true }));
      } catch (e) {
        throw e instanceof StudioError ? new StudioError(e.code, `--from-gguf: ${e.message}`) : e;
      }
      if (problem) throw new StudioError('invalid_input', `--from-gguf: ${problem}`);
    }
    const from = resolve(values['from-hf'] ?? '.');
    if (!gguf && !existsSync(join(from, 'config.json')))
      throw new StudioError('not_found', `--from-hf: ${join(from, 'config.json')}: missing (not a checkpoint folder)`);
    const { dtype, targets, layer, buckets } = commonOptions(values, flags);
    const hypernet = values.hypernet ?? 'none';
    const file = (flag: string, path: string) => {
      const full = resolve(path);
      if (!existsSync(full)) throw new StudioError('not_found', `${flag}: ${full}: no such file`);
      return full;
    };
    const args = gguf
      ? fromGgufArgs({
          file: resolve(gguf),
          ...(values.out ? { out: resolve(values.out) } : {}),
          dtype,
          ...(targets ? { loraTargets: targets } : {}),
          ...(layer !== undefined ? { encoderLayer: layer } : {}),
          ...(values['chat-template'] ? { chatTemplate: file('--chat-template', values['chat-template']) } : {}),
          ...(values.id ? { id: values.id } : {}),
          ...(buckets ? { trainStepBuckets: buckets } : {}),
          force: values.force,
        })
      : fromHfArgs({
          from,
          out: resolve(values.out!),
          dtype,
          ...(targets ? { loraTargets: targets } : {}),
          ...(layer !== undefined ? { encoderLayer: layer } : {}),
          hypernet: hypernet === 'none' || hypernet === 'init' ? hypernet : file('--hypernet', hypernet),
          ...(values['hyper-config'] ? { hyperConfig: file('--hyper-config', values['hyper-config']) } : {}),
          ...(values['chat-template'] ? { chatTemplate: file('--chat-template', values['chat-template']) } : {}),
          ...(values.id ? { id: values.id } : {}),
          ...(buckets ? { trainStepBuckets: buckets } : {}),
          force: values.force,
        });
    const code = await runTrainingModule(args);
    if (code !== 0) {
      io.err(`pskills: bundle create exited with status ${code} (its message is above)`);
      return code === 2 ? 2 : 1;
    }
    return 0;
  },
};

/** The options both sources take, checked: dtype, LoRA targets, encoder layer, train-step buckets. */
function commonOptions(values: Record<string, string | boolean | undefined>, flags: CliContext['flags']) {
  const str = (k: string) => values[k] as string | undefined;
  const dtype = str('dtype') ?? 'fp32';
  if (!DTYPES.includes(dtype))
    throw new StudioError('invalid_input', `--dtype: "${dtype}" is not one of ${DTYPES.join(', ')}`);
  const targets = str('lora-targets')
    ?.split(',')
    .map((t) => t.trim());
  const unknown = targets?.filter((t) => !MODULES.includes(t)) ?? [];
  if (targets && (unknown.length || !targets.length))
    throw new StudioError(
      'invalid_input',
      `--lora-targets: ${unknown.map((t) => `"${t}"`).join(', ')} not among ${MODULES.join(',')}`,
    );
  const layer =
    str('encoder-layer') === undefined
      ? undefined
      : flags.integer(str('encoder-layer')!, '--encoder-layer', { min: 0 });
  const buckets = str('train-step-buckets');
  if (buckets !== undefined && !/^(none|\d+x\d+(,\d+x\d+)*)$/.test(buckets))
    throw new StudioError(
      'invalid_input',
      `--train-step-buckets: "${buckets}" is not BATCHxLENGTH,… (e.g. 4x64,4x128) or none`,
    );
  // The exporter's caps (export/train_step.py), checked before Python starts.
  const over = buckets?.split(',').find((b) => {
    const [n, len] = b.split('x').map(Number);
    return n! > 64 || len! > 8192;
  });
  if (over) throw new StudioError('invalid_input', `--train-step-buckets: "${over}": at most 64 rows of 8192 tokens`);
  return { dtype, targets, layer, buckets };
}
