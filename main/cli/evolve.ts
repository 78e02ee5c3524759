// `pskills evolve`: the text-space loop on a skill. Candidates from the offline edit
// operators or the configured LLM endpoint, scored with the skill's tests in context and compiled; the
// best becomes a new version. `--resume RUN` goes on with a run that was killed or cancelled.
import type { EvolveEvent, EvolveGeneratorKind, EvolveMode, EvolveResult } from '../../common/api/evolve-schemas';
import { EVOLVE_GENERATORS, EVOLVE_MODES } from '../../common/api/evolve-schemas';
import { instantCondition } from '../../common/api/instant-name';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import { usageError } from './usage';

/** The CLI's JSON: its stable shape, then what the API adds. */
export function evolveJson(r: EvolveResult) {
  return {
    skill: r.run.skill.name,
    baseline_score: r.baselineScore,
    iterations: r.iterations.map((i) => ({ candidate_scores: i.candidateScores, best_score: i.bestScore })),
    best: { version: r.best.version, score: r.best.score },
    run: r.run.id,
    from_version: r.run.skill.version,
    generator: r.run.generator,
    modes: r.run.modes,
    adapter: r.adapter,
  };
}

const oneOf = <T extends string>(value: string, allowed: readonly T[], flag: string): T => {
  if (!(allowed as readonly string[]).includes(value))
    throw new StudioError('invalid_input', `${flag}: "${value}" is not one of ${allowed.join(', ')}`);
  return value as T;
};

export const evolveCommand: Command = {
  name: 'evolve',
  usage:
    '(<name>[@<n>] --iterations N | --resume RUN) [--candidates K] [--seed S] [--generator offline|llm] [--modes in_context,instant] [--max-tokens N] [--no-accept] [--bundle DIR]',
  summary:
    'rewrites the skill, scores each candidate with its tests; the best becomes a new version (provenance evolve)',
  async run(argv, { io, flags, withStudio, untilDone }) {
    const { values, positionals } = flags.parse(argv, {
      bundle: { type: 'string' },
      iterations: { type: 'string' },
      candidates: { type: 'string' },
      seed: { type: 'string' },
      generator: { type: 'string' },
      modes: { type: 'string' },
      'max-tokens': { type: 'string' },
      'no-accept': { type: 'boolean', default: false },
      resume: { type: 'string' },
    });
    const resume = values.resume;
    if (resume === undefined ? positionals.length !== 1 || values.iterations === undefined : positionals.length > 1)
      throw usageError(evolveCommand);
    const input =
      resume !== undefined
        ? null
        : {
            ...flags.skillRef(positionals[0]!),
            iterations: flags.integer(values.iterations!, '--iterations', { min: 1 }),
            ...(values.candidates !== undefined && {
              candidates: flags.integer(values.candidates, '--candidates', { min: 1 }),
            }),
            ...(values.seed !== undefined && { seed: flags.integer(values.seed, '--seed', { min: 0 }) }),
            ...(values.generator !== undefined && {
              generator: oneOf<EvolveGeneratorKind>(values.generator, EVOLVE_GENERATORS, '--generator'),
            }),
            ...(values.modes !== undefined && {
              modes: values.modes
                .split(',')
                .map((m) => oneOf<EvolveMode>(instantCondition(m.trim()), EVOLVE_MODES, '--modes')),
            }),
            ...(values['max-tokens'] !== undefined && {
              maxTokens: flags.integer(values['max-tokens'], '--max-tokens', { min: 1 }),
            }),
            ...(values['no-accept'] && { accept: false }),
          };
    if (
      resume !== undefined &&
      (values.iterations ?? values.candidates ?? values.seed ?? values.generator) !== undefined
    )
      throw new StudioError(
        'invalid_input',
        '--resume goes on with the run as it was started: give no other run settings',
      );
    const r = await withStudio(values, async (api) => {
      const handle = input !== null ? api.evolve.run(input, onEvent) : api.evolve.resume({ run: resume! }, onEvent);
      return untilDone(handle);
    });
    if (
      resume !== undefined &&
      positionals[0] !== undefined &&
      flags.skillRef(positionals[0]).name !== r.run.skill.name
    )
      io.err(`note: run ${r.run.id} evolves ${r.run.skill.name}, not ${positionals[0]}`);
    if (values.json) {
      io.out(JSON.stringify(evolveJson(r)));
      return;
    }
    io.out(`${r.run.skill.name}@${r.run.skill.version} baseline ${r.baselineScore.toFixed(3)} (run ${r.run.id})`);
    for (const [i, it] of r.iterations.entries())
      io.out(
        `iteration ${i + 1}\t${it.candidateScores.map((s) => s.toFixed(3)).join(' ') || '-'}\tbest ${it.bestScore.toFixed(3)}`,
      );
    io.out(
      r.run.resultVersion !== null
        ? `new version ${r.best.version} (score ${r.best.score.toFixed(3)})${r.adapter ? `, adapter ${r.adapter}` : ''}`
        : `no candidate beat the baseline: version ${r.best.version} stays (score ${r.best.score.toFixed(3)})`,
    );

    function onEvent(e: EvolveEvent): void {
      if (values.json) return;
      if (e.type === 'run') io.err(`${e.resumed ? 'resuming' : 'started'} run ${e.run}`);
      if (e.type === 'scored')
        io.err(`  iteration ${e.iteration} candidate ${e.index}: ${e.score.toFixed(3)} (${e.operator})`);
    }
  },
};
