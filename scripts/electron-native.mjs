// Builds a copy of better-sqlite3's native module for Electron's ABI, beside (not over) the Node
// one that the CLI and tests use. The Electron main process loads it through nativeBinding.
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, run } from './lib.mjs';

export async function electronSqliteBinding() {
  const electronVersion = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8'),
  ).version;
  const dir = join(ROOT, '.cache', `better-sqlite3-electron-${electronVersion}`);
  const binding = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(binding)) return binding;
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(ROOT, 'node_modules', 'better-sqlite3'), dir, { recursive: true, filter: (p) => !p.includes('/build/') });
  console.log(`start: building better-sqlite3 for Electron ${electronVersion}…`);
  const code = await run(
    'npx',
    ['node-gyp', 'rebuild', '--release', `--target=${electronVersion}`, '--dist-url=https://electronjs.org/headers'],
    { cwd: dir },
  );
  return code === 0 && existsSync(binding) ? binding : null;
}
