// The Python training package's interpreter (training/.venv), for the commands that run one of its
// modules with inherited stdio (eval, skillworld generate).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StudioError } from '../common/errors';
import { APP_ROOT } from './paths';

/** The training venv's interpreter; PSKILLS_PYTHON overrides it (tests, other venvs). */
export function trainingPython(env: NodeJS.ProcessEnv = process.env): string {
  return env.PSKILLS_PYTHON ? resolve(env.PSKILLS_PYTHON) : join(APP_ROOT, 'training', '.venv', 'bin', 'python');
}

/** trainingPython(), or an error that says how to set the venv up. */
export function requireTrainingPython(): string {
  const python = trainingPython();
  if (!existsSync(python)) {
    throw new StudioError(
      'not_found',
      `the training environment is missing (${python}); run \`bash training/setup_venv.sh\` first`,
    );
  }
  return python;
}

/** Runs `python ARGS` in the training venv with inherited stdio, passing Ctrl-C on; its exit status. */
export async function runTrainingModule(args: string[]): Promise<number> {
  const python = requireTrainingPython();
  const child = spawn(python, args, {
    cwd: APP_ROOT,
    stdio: 'inherit',
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
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
