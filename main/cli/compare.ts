// `pskills compare`: one prompt answered with no skill, the skill in context, its instant adapter, its
// distilled adapter (when it has one) and another skill's adapter, in one batch, through the StudioApi.
import { CompareCondition, type CompareRunResult } from '../../common/api/engine-schemas';
import { instantCondition } from '../../common/api/instant-name';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import { usageError } from './usage';

const CONDITIONS: readonly CompareCondition[] = CompareCondition.options;

/** The CLI's JSON: its stable shape (snake_case), plus what the API adds. */
function compareJson(r: CompareRunResult) {
  return {
    skill: r.skill,
    wrong_skill: r.wrongSkill,
    columns: r.columns.map((c) => ({
      condition: c.condition,
      text: c.text,
      prompt_tokens: c.promptTokens,
      completion_tokens: c.completionTokens,
      ttft_ms: Math.round(c.ttftMs * 10) / 10,
      tokens_per_s: Math.round(c.tokensPerSecond * 10) / 10,
      finish_reason: c.finishReason,
      adapter: c.adapter,
      skill: c.skill,
      truncated: c.truncated,
    })),
    skipped: r.skipped,
  };
}

export const compareCommand: Command = {
  name: 'compare',
  usage: `<name>[@<n>] --prompt TEXT [--max-tokens N] [--conditions ${CONDITIONS.join(',')}] [--wrong-skill NAME] [--bundle DIR]`,
  summary: `${CONDITIONS.join(' / ')} side by side`,
  async run(argv, { io, flags, withStudio, untilDone }) {
    const { values, positionals } = flags.parse(argv, {
      bundle: { type: 'string' },
      prompt: { type: 'string' },
      'max-tokens': { type: 'string' },
      conditions: { type: 'string' },
      'wrong-skill': { type: 'string' },
    });
    if (positionals.length !== 1 || values.prompt === undefined) throw usageError(compareCommand);
    // The old name `parametric` reads as instant (docs/cli.md).
    const conditions = values.conditions?.split(',').map((given) => {
      const c = instantCondition(given);
      if (!CONDITIONS.includes(c as CompareCondition))
        throw new StudioError('invalid_input', `--conditions: "${c}" is not one of ${CONDITIONS.join(', ')}`);
      return c as CompareCondition;
    });
    const ref = flags.skillRef(positionals[0]!);
    const maxTokens = values['max-tokens'];
    const input = {
      ...ref,
      prompt: values.prompt,
      maxTokens: maxTokens === undefined ? undefined : flags.integer(maxTokens, '--max-tokens', { min: 1 }),
      ...(conditions && { conditions }),
      ...(values['wrong-skill'] !== undefined && { wrongSkill: values['wrong-skill'] }),
    };
    const r = await withStudio(values, async (api) => {
      const handle = api.compare.run(input, (e) => {
        if (values.json) return;
        if (e.type === 'compile' && e.chunk > 0)
          io.err(`compiling ${e.skill.name}@${e.skill.version}: chunk ${e.chunk}/${e.chunks}`);
        if (e.type === 'start') io.err(`generating ${e.columns.map((c) => c.condition).join(' / ')} in one batch…`);
      });
      return untilDone(handle);
    });
    if (values.json) {
      io.out(JSON.stringify(compareJson(r)));
      return;
    }
    for (const s of r.skipped) io.err(`skipped ${s.condition}: ${s.reason}`);
    for (const c of r.columns) {
      const origin =
        c.condition === 'wrong_skill' && c.skill
          ? ` (adapter ${c.adapter} of ${c.skill.name}@${c.skill.version})`
          : c.adapter
            ? ` (adapter ${c.adapter})`
            : c.truncated
              ? ' (skill text truncated to fit)'
              : '';
      io.out(
        `== ${c.condition}${origin}: ${c.promptTokens} prompt tokens, first token ${c.ttftMs.toFixed(0)} ms, ${c.tokensPerSecond.toFixed(1)} tokens/s, ${c.completionTokens} tokens (${c.finishReason})`,
      );
      io.out(c.text);
      io.out('');
    }
  },
};
