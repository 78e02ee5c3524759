// `pskills compile` and `pskills compare`: a skill version through the bundle's hypernetwork, and
// the side-by-side comparison of none / in_context / parametric / wrong_skill, through the StudioApi.
import type { CompareCondition, CompareRunResult } from '../../common/api/engine-schemas';
import { StudioError } from '../../common/errors';
import { withApi } from './adapters';
import { parse, parseSkillRef } from './args';
import type { Io } from './commands';

export const COMPILE_USAGE = 'usage: pskills compile <name>[@<n>] [--bundle DIR] [--data-dir DIR] [--json]';
export const COMPARE_USAGE =
  'usage: pskills compare <name>[@<n>] --prompt TEXT [--max-tokens N] [--conditions none,in_context,parametric,wrong_skill] [--wrong-skill NAME] [--bundle DIR] [--json]';

const CONDITIONS: readonly CompareCondition[] = ['none', 'in_context', 'parametric', 'wrong_skill'];

/** Ctrl-C cancels the running stream (nothing is stored for a cancelled compile). */
function onInterrupt(cancel: () => void): () => void {
  const handler = () => cancel();
  process.once('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

export async function runCompile(argv: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(argv, { bundle: { type: 'string' } });
  if (positionals.length !== 1) throw new StudioError('invalid_input', COMPILE_USAGE);
  const ref = parseSkillRef(positionals[0]!);
  const r = await withApi(values, async (api) => {
    const handle = api.adapters.compile(ref, (p) => {
      if (!values.json && p.chunk > 0) io.err(`compiling ${p.skill.name}@${p.skill.version}: chunk ${p.chunk}/${p.chunks} (${p.tokens} tokens)`);
    });
    const off = onInterrupt(() => handle.cancel());
    try {
      return await handle.result;
    } finally {
      off();
    }
  });
  if (values.json) io.out(JSON.stringify({ adapter: r.adapter.id, rank: r.rank, ms: Math.round(r.ms * 10) / 10, cached: r.cached, chunks: r.chunks, tokens: r.tokens }));
  else {
    const what = r.cached ? 'already compiled:' : 'compiled';
    io.out(`${what} ${r.skill.name}@${r.skill.version} → adapter ${r.adapter.id} (rank ${r.rank}, ${r.chunks} chunk${r.chunks === 1 ? '' : 's'} of ${r.tokens} tokens, ${r.ms.toFixed(0)} ms)`);
  }
}

/** The CLI's JSON: the shape issue 6 names (snake_case), plus what the API adds. */
export function compareJson(r: CompareRunResult) {
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

function positiveInt(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new StudioError('invalid_input', `${flag}: "${text}" is not an integer ≥ 1`);
  return n;
}

export async function runCompare(argv: string[], io: Io): Promise<void> {
  const { values, positionals } = parse(argv, {
    bundle: { type: 'string' },
    prompt: { type: 'string' },
    'max-tokens': { type: 'string' },
    conditions: { type: 'string' },
    'wrong-skill': { type: 'string' },
  });
  if (positionals.length !== 1 || values.prompt === undefined) throw new StudioError('invalid_input', COMPARE_USAGE);
  const conditions = values.conditions?.split(',').map((c) => {
    if (!CONDITIONS.includes(c as CompareCondition)) throw new StudioError('invalid_input', `--conditions: "${c}" is not one of ${CONDITIONS.join(', ')}`);
    return c as CompareCondition;
  });
  const ref = parseSkillRef(positionals[0]!);
  const input = {
    ...ref,
    prompt: values.prompt,
    maxTokens: positiveInt(values['max-tokens'], '--max-tokens'),
    ...(conditions && { conditions }),
    ...(values['wrong-skill'] !== undefined && { wrongSkill: values['wrong-skill'] }),
  };
  const r = await withApi(values, async (api) => {
    const handle = api.compare.run(input, (e) => {
      if (values.json) return;
      if (e.type === 'compile' && e.chunk > 0) io.err(`compiling ${e.skill.name}@${e.skill.version}: chunk ${e.chunk}/${e.chunks}`);
      if (e.type === 'start') io.err(`generating ${e.columns.map((c) => c.condition).join(' / ')} in one batch…`);
    });
    const off = onInterrupt(() => handle.cancel());
    try {
      return await handle.result;
    } finally {
      off();
    }
  });
  if (values.json) {
    io.out(JSON.stringify(compareJson(r)));
    return;
  }
  for (const s of r.skipped) io.err(`skipped ${s.condition}: ${s.reason}`);
  for (const c of r.columns) {
    const origin = c.condition === 'wrong_skill' && c.skill ? ` (adapter ${c.adapter} of ${c.skill.name}@${c.skill.version})` : c.adapter ? ` (adapter ${c.adapter})` : c.truncated ? ' (skill text truncated to fit)' : '';
    io.out(`== ${c.condition}${origin}: ${c.promptTokens} prompt tokens, first token ${c.ttftMs.toFixed(0)} ms, ${c.tokensPerSecond.toFixed(1)} tokens/s, ${c.completionTokens} tokens (${c.finishReason})`);
    io.out(c.text);
    io.out('');
  }
}
