// Runs the browser tests: builds the renderer when its sources are newer than out/renderer, then
// hands every tests/e2e/*.spec.ts to node:test (one file at a time: each starts its own host).
// Usage: node --import tsx tests/e2e/run.ts [more node --test flags]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRendererBuilt, ROOT } from './harness';

ensureRendererBuilt();
const dir = join(ROOT, 'tests/e2e');
const specs = readdirSync(dir)
  .filter((f) => f.endsWith('.spec.ts'))
  .map((f) => join(dir, f));
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', ...process.argv.slice(2), ...specs],
  { cwd: ROOT, stdio: 'inherit' },
);
process.exit(r.status ?? 1);
