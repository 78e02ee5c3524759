// `pskills skillworld generate`: SkillWorld skill folders and tasks.jsonl, written by the Python
// generator (`python -m pskills_train.skillworld`); its output passes straight through.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import { runTrainingModule } from '../training-venv';
import { usageError } from './usage';

const SPLITS = ['train', 'val', 'test'];

export const skillworldGenerate: Command = {
  name: 'skillworld generate',
  usage: `--split ${SPLITS.join('|')} --n N --out DIR [--seed S] [--filler DIR] [--tasks-per-skill K]`,
  summary: 'checkable generated skills and tasks (docs/skillworld.md)',
  async run(argv, { io, flags }) {
    const { values, positionals } = flags.parse(argv, {
      split: { type: 'string' },
      n: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      filler: { type: 'string' },
      'tasks-per-skill': { type: 'string' },
    });
    if (positionals.length || !values.split || !values.n || !values.out) throw usageError(skillworldGenerate);
    if (!SPLITS.includes(values.split))
      throw new StudioError('invalid_input', `--split: "${values.split}" is not one of ${SPLITS.join(', ')}`);
    const count = (text: string, flag: string) => flags.integer(text, flag, { min: 1, expected: 'a whole number ≥ 1' });
    const n = count(values.n, '--n');
    const seed =
      values.seed === undefined
        ? undefined
        : flags.integer(values.seed, '--seed', { min: 0, expected: 'a whole number' });
    const perSkill =
      values['tasks-per-skill'] === undefined ? undefined : count(values['tasks-per-skill'], '--tasks-per-skill');
    const filler = values.filler ? resolve(values.filler) : undefined;
    if (filler && !existsSync(filler)) throw new StudioError('not_found', `--filler: ${filler}: no such folder`);
    const args = [
      '-m',
      'pskills_train.skillworld',
      'generate',
      '--split',
      values.split,
      '--n',
      String(n),
      '--out',
      resolve(values.out),
    ];
    if (seed !== undefined) args.push('--seed', String(seed));
    if (filler) args.push('--filler', filler);
    if (perSkill !== undefined) args.push('--tasks-per-skill', String(perSkill));
    const code = await runTrainingModule(args);
    if (code !== 0) {
      io.err(`pskills: skillworld generate exited with status ${code} (its message is above)`);
      return code === 2 ? 2 : 1;
    }
    return 0;
  },
};
