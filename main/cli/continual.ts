// `pskills continual run`: SkillWorld episodes, each verified episode's lesson compiled and absorbed
// by the mode, the held-out tasks of every lesson so far measured after each (continual.run).
// `--resume RUN` goes on with a run that was killed or cancelled (continual.resume).
import { resolve } from 'node:path';
import {
  CONTINUAL_MODES,
  ContinualMode,
  type ContinualEvent,
  type ContinualRunInput,
  type ContinualRunResult,
} from '../../common/api/continual-schemas';
import type { StudioApi } from '../../common/api/contract';
import type { StreamHandle } from '../../common/api/define';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import { usageError } from './usage';

/** The CLI's JSON: its stable shape (snake_case), then the rest. */
export function continualJson(r: ContinualRunResult) {
  return {
    mode: r.mode,
    episodes: r.episodes.map((e) => ({
      episode: e.episode,
      pass_rate: e.passRate,
      global_version: e.globalVersion,
      passed: e.passed,
      n: e.n,
      world: e.world,
      lesson: e.lesson,
      adapter: e.adapter,
      passed_tasks: e.passedTasks,
      truncated: e.truncated,
      ms: Math.round(e.ms),
    })),
    final_pass_rate: r.finalPassRate,
    run: r.run,
    suite: r.suite,
    seed: r.seed,
    bundle: r.bundle,
    settings: {
      beta: r.settings.beta,
      rank_budget: r.settings.rankBudget,
      demos: r.settings.demos,
      tasks: r.settings.tasks,
      max_tokens: r.settings.maxTokens,
      tier: r.settings.tier,
      steps: r.settings.steps,
      rehearse: r.settings.rehearse,
      variants: r.settings.variants,
      summariser: r.settings.summariser,
    },
    ms: Math.round(r.ms),
  };
}

/** The flags that start a run; `--resume` goes on with the stored ones and takes none of them. */
const RUN_SETTINGS = {
  suite: { type: 'string' },
  episodes: { type: 'string' },
  mode: { type: 'string' },
  seed: { type: 'string' },
  beta: { type: 'string' },
  rank: { type: 'string' },
  demos: { type: 'string' },
  tasks: { type: 'string' },
  'max-tokens': { type: 'string' },
  world: { type: 'string' },
  summariser: { type: 'string' },
  tier: { type: 'string' },
  steps: { type: 'string' },
  rehearse: { type: 'string' },
  variants: { type: 'string' },
} as const;

export const continualRun: Command = {
  name: 'continual run',
  usage: `(--suite skillworld --episodes N --mode ${CONTINUAL_MODES.join('|')} [--seed S] [--beta B] [--rank K] [--demos D] [--tasks T] [--max-tokens N] [--world DIR] [--summariser template|llm] [--tier distilled|instant] [--steps K] [--rehearse K] [--variants V] | --resume RUN) [--bundle DIR]`,
  summary: "lessons from verified SkillWorld episodes into the bundle's global adapter; pass rate per episode",
  async run(argv, { io, flags, withStudio, untilDone }) {
    const { values, positionals } = flags.parse(argv, {
      ...RUN_SETTINGS,
      bundle: { type: 'string' },
      resume: { type: 'string' },
    });
    const resume = values.resume;
    if (positionals.length) throw usageError(continualRun);
    if (resume !== undefined) {
      if (Object.keys(RUN_SETTINGS).some((k) => values[k as keyof typeof RUN_SETTINGS] !== undefined))
        throw new StudioError(
          'invalid_input',
          '--resume goes on with the run as it was started: give no other run settings',
        );
      return report(await go((api, onEvent) => api.continual.resume({ run: resume }, onEvent)));
    }
    if (!values.suite || !values.episodes || !values.mode) throw usageError(continualRun);
    if (values.suite !== 'skillworld')
      throw new StudioError('invalid_input', `--suite: "${values.suite}" is not one of skillworld`);
    const mode = ContinualMode.safeParse(values.mode);
    if (!mode.success)
      throw new StudioError('invalid_input', `--mode: "${values.mode}" is not one of ${CONTINUAL_MODES.join(', ')}`);
    if (values.summariser !== undefined && values.summariser !== 'template' && values.summariser !== 'llm')
      throw new StudioError('invalid_input', `--summariser: "${values.summariser}" is not one of template, llm`);
    if (values.tier !== undefined && values.tier !== 'distilled' && values.tier !== 'instant')
      throw new StudioError('invalid_input', `--tier: "${values.tier}" is not one of distilled, instant`);
    const count = (text: string | undefined, flag: string) =>
      text === undefined ? undefined : flags.integer(text, flag, { min: 1, expected: 'a whole number ≥ 1' });
    const input: ContinualRunInput = {
      suite: 'skillworld',
      episodes: count(values.episodes, '--episodes')!,
      mode: mode.data,
      seed: values.seed === undefined ? undefined : flags.integer(values.seed, '--seed', { min: 0 }),
      beta: values.beta === undefined ? undefined : flags.number(values.beta, '--beta'),
      rankBudget: count(values.rank, '--rank'),
      demos: count(values.demos, '--demos'),
      tasks: count(values.tasks, '--tasks'),
      maxTokens: count(values['max-tokens'], '--max-tokens'),
      world: values.world === undefined ? undefined : resolve(values.world),
      summariser: values.summariser as ContinualRunInput['summariser'],
      tier: values.tier as ContinualRunInput['tier'],
      steps: count(values.steps, '--steps'),
      rehearse: values.rehearse === undefined ? undefined : flags.integer(values.rehearse, '--rehearse', { min: 0 }),
      variants: values.variants === undefined ? undefined : flags.integer(values.variants, '--variants', { min: 0 }),
    };
    return report(await go((api, onEvent) => api.continual.run(input, onEvent)));

    function go(
      start: (api: StudioApi, onEvent: (e: ContinualEvent) => void) => StreamHandle<ContinualRunResult>,
    ): Promise<ContinualRunResult> {
      return withStudio(values, async (api) => {
        const handle = start(api, (e) => {
          if (values.json) return;
          if (e.type === 'run')
            io.err(`${e.resumed ? `resuming run ${e.run} (${e.done} episodes done)` : `started run ${e.run}`}`);
          if (e.type === 'episode') io.err(`episode ${e.episode}/${e.episodes}: ${e.world}`);
          if (e.type === 'warning') io.err(`episode ${e.episode}: ${e.message}`);
        });
        return untilDone(handle);
      });
    }

    function report(r: ContinualRunResult): void {
      if (values.json) {
        io.out(JSON.stringify(continualJson(r)));
        return;
      }
      io.out('episode\tpass rate\tpassed/n\tglobal\tlesson');
      for (const e of r.episodes)
        io.out(
          `${e.episode}\t${e.passRate.toFixed(3)}\t${e.passed}/${e.n}\t${e.globalVersion === null ? '-' : `v${e.globalVersion}`}\t${e.lesson ? `${e.lesson.name}@${e.lesson.version}` : '(none: no demo passed)'}`,
        );
      io.out(
        `${r.mode}: final pass rate ${r.finalPassRate.toFixed(3)} over ${r.episodes.at(-1)?.n ?? 0} held-out tasks (run ${r.run})`,
      );
    }
  },
};
