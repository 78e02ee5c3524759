// npm run test:e2e: install Debian's chromium when missing, build if stale, run the browser tests.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildIfStale, ROOT, run } from './lib.mjs';

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log('test:e2e: installing chromium from Debian…');
  const apt = async (...a) => run('apt-get', a, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if ((await apt('update')) !== 0 || (await apt('install', '-y', '--no-install-recommends', 'chromium')) !== 0) {
    console.error('test:e2e: could not install chromium (apt-get install -y chromium needs root)');
    process.exit(1);
  }
}
if ((await buildIfStale()) !== 0) process.exit(1);
const specs = readdirSync(join(ROOT, 'tests', 'e2e'))
  .filter((f) => f.endsWith('.spec.ts'))
  .map((f) => join('tests', 'e2e', f));
if (specs.length === 0) {
  console.error('test:e2e: no browser tests found');
  process.exit(1);
}
process.exit(await run(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...specs]));
