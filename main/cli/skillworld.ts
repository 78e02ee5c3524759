// `pskills skillworld generate`: SkillWorld skill folders and tasks.jsonl, written by the Python
// generator (`python -m pskills_train.skillworld`); its output passes straight through.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import { parse } from './args';
import type { Io } from './commands';
import { runTrainingModule } from './eval';

export const SKILLWORLD_USAGE =
  'usage: pskills skillworld generate --split train|val|test --n N --out DIR [--seed S] [--filler DIR] [--tasks-per-skill K]';

const isCount = (v: string | undefined) => v !== undefined && /^[1-9][0-9]*$/.test(v);

export async function runSkillworld(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'generate') throw new StudioError('invalid_input', SKILLWORLD_USAGE);
  const { values, positionals } = parse(rest, {
    split: { type: 'string' },
    n: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    filler: { type: 'string' },
    'tasks-per-skill': { type: 'string' },
  });
  if (positionals.length || !values.split || !values.n || !values.out) throw new StudioError('invalid_input', SKILLWORLD_USAGE);
  if (!['train', 'val', 'test'].includes(values.split)) throw new StudioError('invalid_input', `--split: "${values.split}" is not one of train, val, test`);
  if (!isCount(values.n)) throw new StudioError('invalid_input', `--n: "${values.n}" is not a whole number ≥ 1`);
  if (values.seed !== undefined && !/^[0-9]+$/.test(values.seed)) throw new StudioError('invalid_input', `--seed: "${values.seed}" is not a whole number`);
  const perSkill = values['tasks-per-skill'];
  if (perSkill !== undefined && !isCount(perSkill)) throw new StudioError('invalid_input', `--tasks-per-skill: "${perSkill}" is not a whole number ≥ 1`);
  const filler = values.filler ? resolve(values.filler) : undefined;
  if (filler && !existsSync(filler)) throw new StudioError('not_found', `--filler: ${filler}: no such folder`);
  const args = ['-m', 'pskills_train.skillworld', 'generate', '--split', values.split, '--n', values.n, '--out', resolve(values.out)];
  if (values.seed !== undefined) args.push('--seed', values.seed);
  if (filler) args.push('--filler', filler);
  if (perSkill !== undefined) args.push('--tasks-per-skill', perSkill);
  const code = await runTrainingModule(args);
  if (code !== 0) {
    io.err(`pskills: skillworld generate exited with status ${code} (its message is above)`);
    return code === 2 ? 2 : 1;
  }
  return 0;
}
