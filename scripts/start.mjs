// npm start: build if needed, then open the Electron window when its binary is present (one try
// to fetch it if missing), else serve the same studio on 127.0.0.1 and print its address.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { electronSqliteBinding } from './electron-native.mjs';
import { buildIfStale, ROOT, run } from './lib.mjs';

const args = process.argv.slice(2);
const electronDir = join(ROOT, 'node_modules', 'electron');

function electronBinary() {
  const pathTxt = join(electronDir, 'path.txt');
  if (!existsSync(pathTxt)) return null;
  const bin = join(electronDir, 'dist', readFileSync(pathTxt, 'utf8').trim());
  return existsSync(bin) ? bin : null;
}

async function obtainElectronOnce() {
  if (electronBinary() || !existsSync(join(electronDir, 'install.js'))) return electronBinary();
  console.log('start: the Electron binary is missing; trying once to download it…');
  const code = await run(process.execPath, [join(electronDir, 'install.js')], {
    stdio: ['ignore', 'ignore', 'ignore'],
    timeout: 120_000,
  });
  if (code !== 0) console.log('start: could not obtain Electron here; serving the studio in the browser instead.');
  return electronBinary();
}

if ((await buildIfStale()) !== 0) process.exit(1);

const bin = await obtainElectronOnce();
const headless = process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY;
const binding = bin && !headless ? await electronSqliteBinding() : null;
if (bin && !headless && binding) {
  process.exit(await run(bin, ['.', ...args], { env: { ...process.env, PSKILLS_SQLITE_BINDING: binding } }));
}
if (bin && !headless)
  console.log('start: could not build better-sqlite3 for Electron; serving in the browser instead.');
if (bin && headless) console.log('start: no display; serving the studio in the browser instead.');
process.exit(await run(process.execPath, [join(ROOT, 'bin', 'pskills.mjs'), 'serve', ...args]));
