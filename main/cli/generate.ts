// `pskills generate`: one prompt through a bundle (default: resources/bundles/default), tokens
// streamed to stdout, optionally with a PEFT adapter folder.
import { resolve } from 'node:path';
import { GenerateInput } from '../../common/api/engine-schemas';
import { StudioError } from '../../common/errors';
import { readPeftDir } from '../adapters/peft-dir';
import { createStudio } from '../api/root';
import { checkAdapterFits, foldAdapter, type EngineAdapter } from '../engine';
import { defaultDataDir } from '../paths';
import { parse } from './args';
import type { Io } from './commands';

export const GENERATE_USAGE =
  'usage: pskills generate [--bundle DIR] --prompt TEXT [--adapter DIR] [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--raw] [--json]';

const num = (v: string | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new StudioError('invalid_input', `--${flag}: "${v}" is not a number`);
  return n;
};

export async function runGenerate(argv: string[], io: Io, write: (text: string) => void): Promise<void> {
  const { values, positionals } = parse(argv, {
    bundle: { type: 'string' },
    prompt: { type: 'string' },
    adapter: { type: 'string' },
    'max-tokens': { type: 'string' },
    temperature: { type: 'string' },
    'top-k': { type: 'string' },
    'top-p': { type: 'string' },
    seed: { type: 'string' },
    raw: { type: 'boolean', default: false },
  });
  if (positionals.length || values.prompt === undefined) throw new StudioError('invalid_input', GENERATE_USAGE);
  const sampling = Object.fromEntries(
    Object.entries({
      temperature: num(values.temperature, 'temperature') ?? 0,
      topK: num(values['top-k'], 'top-k'),
      topP: num(values['top-p'], 'top-p'),
      seed: num(values.seed, 'seed'),
    }).filter(([, v]) => v !== undefined),
  );
  const parsed = GenerateInput.safeParse({
    ...(values.raw ? { prompt: values.prompt } : { messages: [{ role: 'user', content: values.prompt }] }),
    maxTokens: num(values['max-tokens'], 'max-tokens') ?? 128,
    sampling,
  });
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new StudioError('invalid_input', `${i.path.join('.')}: ${i.message}`);
  }

  const studio = createStudio({ dataDir: values['data-dir'] ? resolve(values['data-dir']) : defaultDataDir() });
  try {
    if (values.bundle) await studio.engine.load(values.bundle);
    const bundle = await studio.engine.current();
    let adapter: EngineAdapter | null = null;
    if (values.adapter) {
      adapter = foldAdapter((await readPeftDir(resolve(values.adapter))).adapter);
      checkAdapterFits(bundle.manifest, adapter);
    }
    const controller = new AbortController();
    process.once('SIGINT', () => controller.abort());
    const r = await studio.engine.generate(parsed.data, { emit: (e) => !values.json && write(e.text), signal: controller.signal }, adapter);
    if (values.json) io.out(JSON.stringify(r));
    else {
      write('\n');
      io.err(`${r.promptTokens} prompt + ${r.completionTokens} tokens, first token ${r.ttftMs.toFixed(0)} ms, ${r.tokensPerSecond.toFixed(1)} tokens/s (${r.finishReason})`);
    }
  } finally {
    await studio.dispose();
  }
}
