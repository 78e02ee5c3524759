// `pskills generate`: one prompt through a bundle (default: resources/bundles/default), tokens
// streamed to stdout, optionally with a PEFT adapter folder.
import { resolve } from 'node:path';
import { GenerateInput } from '../../common/api/engine-schemas';
import { StudioError } from '../../common/errors';
import { readPeftDir } from '../adapters/peft-dir';
import { checkAdapterFits, foldAdapter, type EngineAdapter } from '../engine';
import type { Command } from './command';
import { usageError } from './usage';

export const generateCommand: Command = {
  name: 'generate',
  usage:
    '[--bundle DIR] --prompt TEXT [--adapter DIR] [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--raw]',
  summary: 'one prompt through a bundle (default: the shipped one), tokens streamed; --raw: no chat template',
  async run(argv, { io, flags, withStudio, onInterrupt }) {
    const { values, positionals } = flags.parse(argv, {
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
    if (positionals.length || values.prompt === undefined) throw usageError(generateCommand);
    const num = (flag: 'max-tokens' | 'temperature' | 'top-k' | 'top-p' | 'seed') => {
      const text = values[flag];
      return text === undefined ? undefined : flags.number(text, `--${flag}`);
    };
    const sampling = Object.fromEntries(
      Object.entries({
        temperature: num('temperature') ?? 0,
        topK: num('top-k'),
        topP: num('top-p'),
        seed: num('seed'),
      }).filter(([, v]) => v !== undefined),
    );
    const parsed = GenerateInput.safeParse({
      ...(values.raw ? { prompt: values.prompt } : { messages: [{ role: 'user', content: values.prompt }] }),
      maxTokens: num('max-tokens') ?? 128,
      sampling,
    });
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw new StudioError('invalid_input', `${i.path.join('.')}: ${i.message}`);
    }

    const r = await withStudio(values, async (_api, studio) => {
      const bundle = await studio.engine.current();
      let adapter: EngineAdapter | null = null;
      if (values.adapter) {
        adapter = foldAdapter((await readPeftDir(resolve(values.adapter))).adapter);
        checkAdapterFits(bundle.manifest, adapter);
      }
      const controller = new AbortController();
      const off = onInterrupt(() => controller.abort());
      try {
        return await studio.engine.generate(
          parsed.data,
          { emit: (e) => !values.json && io.write(e.text), signal: controller.signal },
          adapter,
        );
      } finally {
        off();
      }
    });
    if (values.json) io.out(JSON.stringify(r));
    else {
      io.write('\n');
      io.err(
        `${r.promptTokens} prompt + ${r.completionTokens} tokens, first token ${r.ttftMs.toFixed(0)} ms, ${r.tokensPerSecond.toFixed(1)} tokens/s (${r.finishReason})`,
      );
    }
  },
};
