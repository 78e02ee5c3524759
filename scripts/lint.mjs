// npm run lint: eslint on the TypeScript and Svelte, prettier --check on the same files (settings in
// .prettierrc.json, exclusions in .prettierignore; `npm run format` rewrites them), then ruff and
// mypy on the Python package (training/src/pskills_train and training/tests; their settings are in
// training/pyproject.toml).
// Every step runs even after a failure; non-zero exit if any failed.
// ruff and mypy come from training/.venv. `npm test` runs lint before pytest, so on a fresh clone (and
// in CI) the venv does not exist yet: make or refresh it first, as test:py does (a no-op when current).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from './lib.mjs';

const TRAINING = join(ROOT, 'training');
const BIN = join(TRAINING, '.venv', 'bin');

const failed = [];
if ((await run('npx', ['eslint', '.'])) !== 0) failed.push('eslint');
// eslint sees static imports only: import(), require() and circles are checked here.
if ((await run('node', [join(ROOT, 'scripts', 'lint-layers.mjs')])) !== 0) failed.push('lint-layers');
// --log-level warn: only the files that are not formatted are printed.
if ((await run('npx', ['prettier', '--check', '--log-level', 'warn', '.'])) !== 0) {
  console.error('lint: prettier: the files above are not formatted; `npm run format` rewrites them');
  failed.push('prettier');
}

const venvOk = (await run('bash', [join(TRAINING, 'setup_venv.sh')])) === 0;
const missing = ['ruff', 'mypy'].filter((tool) => !existsSync(join(BIN, tool)));
if (!venvOk || missing.length) {
  console.error(
    `lint: ${missing.length ? `${missing.join(' and ')} not found in training/.venv` : 'could not set up training/.venv'}; ` +
      'run `bash training/setup_venv.sh` (it installs the dev tools of training/pyproject.toml) and lint again',
  );
  failed.push('python');
} else {
  if ((await run(join(BIN, 'ruff'), ['check', 'src/pskills_train', 'tests'], { cwd: TRAINING })) !== 0)
    failed.push('ruff');
  if ((await run(join(BIN, 'mypy'), [], { cwd: TRAINING })) !== 0) failed.push('mypy');
}
if (failed.length) console.error(`lint: failed: ${failed.join(', ')}`);
process.exit(failed.length ? 1 : 0);
