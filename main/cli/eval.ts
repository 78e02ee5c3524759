// `pskills eval`: the evaluation tables (a folder of real skills, or the SkillWorld suite), computed by
// the Python package underneath (`python -m pskills_train.evals`); its stdout (the table) and stderr
// pass straight through.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import { DEFAULT_BUNDLE_DIR } from '../paths';
import type { Command } from './command';
import { requireTrainingPython, runTrainingModule } from '../training-venv';
import { usageError } from './usage';

export { trainingPython } from '../training-venv'; // the interpreter eval runs, where its tests look for it

export const evalCommand: Command = {
  name: 'eval',
  usage:
    '(--skills DIR | --suite skillworld [--n N]) --out FILE.json [--seed S] [--bundle DIR] [-- extra arguments for pskills_train.evals]',
  summary: 'the evaluation tables (training/.venv)',
  async run(argv, { io, flags }) {
    const dash = argv.indexOf('--');
    const own = dash < 0 ? argv : argv.slice(0, dash);
    const extra = dash < 0 ? [] : argv.slice(dash + 1);
    const { values, positionals } = flags.parse(own, {
      skills: { type: 'string' },
      out: { type: 'string' },
      bundle: { type: 'string' },
      suite: { type: 'string' },
      n: { type: 'string' },
      seed: { type: 'string' },
    });
    const suite = values.suite ?? 'skills';
    if (suite !== 'skills' && suite !== 'skillworld')
      throw new StudioError('invalid_input', `--suite: "${suite}" is not one of skills, skillworld`);
    const skillworld = suite === 'skillworld';
    if (positionals.length || !values.out || skillworld === Boolean(values.skills)) throw usageError(evalCommand);
    if (!skillworld && values.n !== undefined)
      throw new StudioError('invalid_input', '--n goes with --suite skillworld');
    const n = values.n === undefined ? undefined : flags.integer(values.n, '--n', { min: 1 });
    const seed = values.seed === undefined ? undefined : flags.integer(values.seed, '--seed', { min: 0 });
    const skills = values.skills ? resolve(values.skills) : null;
    if (skills && !existsSync(skills)) throw new StudioError('not_found', `--skills: ${skills}: no such folder`);
    const bundle = values.bundle ? resolve(values.bundle) : DEFAULT_BUNDLE_DIR;
    if (!existsSync(join(bundle, 'bundle.json'))) {
      throw new StudioError(
        'not_found',
        values.bundle
          ? `--bundle: ${bundle}: no bundle.json there`
          : `no default bundle at ${bundle}; pass --bundle DIR`,
      );
    }
    const what = [
      ...(skills ? ['--skills', skills] : ['--suite', 'skillworld']),
      ...(n ? ['--n', String(n)] : []),
      ...(seed !== undefined ? ['--seed', String(seed)] : []),
    ];
    const args = ['-m', 'pskills_train.evals', ...what, '--out', resolve(values.out), '--bundle', bundle, ...extra];
    if (!values.json) io.err(`running ${requireTrainingPython()} ${args.join(' ')}`);
    const code = await runTrainingModule(args);
    if (code !== 0)
      throw new StudioError('internal', `pskills_train.evals exited with status ${code} (its output is above)`);
    return 0;
  },
};
