// Helpers shared by the npm scripts (start, test): run a command, find stale builds.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

export function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', () => resolve(127));
  });
}

export function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function newest(dir) {
  let t = 0;
  if (!existsSync(dir)) return t;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** True when out/ is missing or older than any source the build reads. */
export function buildIsStale() {
  const stamp = join(ROOT, 'out', 'renderer', 'index.html');
  if (!existsSync(stamp) || !existsSync(join(ROOT, 'out', 'main', 'index.js'))) return true;
  const built = statSync(stamp).mtimeMs;
  const sources = ['main', 'preload', 'renderer', 'common'].map((d) => newest(join(ROOT, d)));
  return Math.max(...sources, statSync(join(ROOT, 'electron.vite.config.ts')).mtimeMs) > built;
}

export async function buildIfStale() {
  if (!buildIsStale()) return 0;
  console.log('start: building the studio (electron-vite build)…');
  // Warnings and errors only: the per-file size table is ~35 lines before the address.
  return run('npx', ['electron-vite', 'build', '--logLevel', 'warn']);
}
