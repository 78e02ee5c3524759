// `npm start` prints the address and little else: its build (scripts/lib.mjs buildIfStale) logs only
// warnings, and there are none, because Monaco, ECharts and the other libraries are split into
// chunks under Vite's 500 kB warning (electron.vite.config.ts) rather than the limit raised.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const out = mkdtempSync(join(tmpdir(), 'pskills-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

it('builds with no warning, every renderer chunk under 500 kB', () => {
  const r = spawnSync('npx', ['electron-vite', 'build', '--logLevel', 'warn', '--outDir', out], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  expect(r.status, r.stderr).toBe(0);
  // A folder outside the project is not emptied first: Vite says so, which npm start never sees.
  const said = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .map((l) => stripVTControlCharacters(l)) // colour codes alone are not a warning
    .filter((l) => l.trim() && !/is not inside project root and will not be emptied|--emptyOutDir/.test(l));
  expect(said).toEqual([]);
  const assets = join(out, 'renderer', 'assets');
  const big = readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ f, kB: statSync(join(assets, f)).size / 1000 }))
    .filter(({ kB }) => kB > 500);
  expect(big).toEqual([]);
});
