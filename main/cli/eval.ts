// `pskills eval`: the evaluation tables (a folder of real skills, or the SkillWorld suite), computed by
// the Python package underneath (`python -m pskills_train.evals`); its stdout (the table) and stderr
// pass straight through.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StudioError } from '../../common/errors';
import { APP_ROOT, DEFAULT_BUNDLE_DIR } from '../paths';
import { parse } from './args';
import type { Io } from './commands';

export const EVAL_USAGE =
  'usage: pskills eval (--skills DIR | --suite skillworld [--n N]) --out FILE.json [--seed S] [--bundle DIR] [-- extra arguments for pskills_train.evals]';

const POSITIVE_INT = /^[1-9][0-9]*$/;

/** The training venv's interpreter; PSKILLS_PYTHON overrides it (tests, other venvs). */
export function trainingPython(env: NodeJS.ProcessEnv = process.env): string {
  return env.PSKILLS_PYTHON ? resolve(env.PSKILLS_PYTHON) : join(APP_ROOT, 'training', '.venv', 'bin', 'python');
}

export async function runEval(argv: string[], io: Io): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const extra = dash < 0 ? [] : argv.slice(dash + 1);
  const { values, positionals } = parse(own, {
    skills: { type: 'string' },
    out: { type: 'string' },
    bundle: { type: 'string' },
    suite: { type: 'string' },
    n: { type: 'string' },
    seed: { type: 'string' },
  });
  const suite = values.suite ?? 'skills';
  if (suite !== 'skills' && suite !== 'skillworld') throw new StudioError('invalid_input', `--suite: "${suite}" is not one of skills, skillworld`);
  const skillworld = suite === 'skillworld';
  if (positionals.length || !values.out || skillworld === Boolean(values.skills)) throw new StudioError('invalid_input', EVAL_USAGE);
  if (!skillworld && values.n !== undefined) throw new StudioError('invalid_input', '--n goes with --suite skillworld');
  for (const k of ['n', 'seed'] as const) {
    const v = values[k];
    if (v !== undefined && !(POSITIVE_INT.test(v) || (k === 'seed' && v === '0'))) throw new StudioError('invalid_input', `--${k}: "${v}" is not an integer ≥ ${k === 'n' ? 1 : 0}`);
  }
  const skills = values.skills ? resolve(values.skills) : null;
  if (skills && !existsSync(skills)) throw new StudioError('not_found', `--skills: ${skills}: no such folder`);
  const bundle = values.bundle ? resolve(values.bundle) : DEFAULT_BUNDLE_DIR;
  if (!existsSync(join(bundle, 'bundle.json'))) {
    throw new StudioError('not_found', values.bundle ? `--bundle: ${bundle}: no bundle.json there` : `no default bundle at ${bundle}; pass --bundle DIR`);
  }
  const what = [...(skills ? ['--skills', skills] : ['--suite', 'skillworld']), ...(values.n ? ['--n', values.n] : []), ...(values.seed ? ['--seed', values.seed] : [])];
  const args = ['-m', 'pskills_train.evals', ...what, '--out', resolve(values.out), '--bundle', bundle, ...extra];
  if (!values.json) io.err(`running ${requireTrainingPython()} ${args.join(' ')}`);
  const code = await runTrainingModule(args);
  if (code !== 0) throw new StudioError('internal', `pskills_train.evals exited with status ${code} (its output is above)`);
  return 0;
}

function requireTrainingPython(): string {
  const python = trainingPython();
  if (!existsSync(python)) {
    throw new StudioError('not_found', `the training environment is missing (${python}); run \`bash training/setup_venv.sh\` first`);
  }
  return python;
}

/** Runs `python ARGS` in the training venv with inherited stdio, passing Ctrl-C on; its exit status. */
export async function runTrainingModule(args: string[]): Promise<number> {
  const python = requireTrainingPython();
  const child = spawn(python, args, { cwd: APP_ROOT, stdio: 'inherit', env: { ...process.env, PYTHONUNBUFFERED: '1' } });
  const stop = () => child.kill('SIGINT');
  process.once('SIGINT', stop);
  try {
    return await new Promise<number>((done, fail) => {
      child.once('error', (err) => fail(new StudioError('internal', `could not start ${python}: ${err.message}`)));
      child.once('exit', (c, signal) => done(c ?? (signal ? 130 : 1)));
    });
  } finally {
    process.off('SIGINT', stop);
  }
}
