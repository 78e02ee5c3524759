// npm run test:py: make training/.venv when missing (torch==2.13.0 CPU), then run pytest.
import { join } from 'node:path';
import { ROOT, run } from './lib.mjs';

if ((await run('bash', [join(ROOT, 'training', 'setup_venv.sh')])) !== 0) {
  console.error('test:py: could not set up training/.venv');
  process.exit(1);
}
process.exit(
  await run(join(ROOT, 'training', '.venv', 'bin', 'python'), [
    '-m',
    'pytest',
    'training/tests',
    '-q',
    ...process.argv.slice(2),
  ]),
);
