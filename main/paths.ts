// Where things live: the data folder (same place Electron's userData would be) and app files.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository / app root: the folder holding package.json. */
export const APP_ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'parametric-skills-studio') return dir;
    } catch {
      /* keep walking up */
    }
    dir = dirname(dir);
  }
  return resolve('.');
})();

export const APP_VERSION = (JSON.parse(readFileSync(join(APP_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

export const PRODUCT_NAME = 'ParametricSkills Studio';

/** Mirrors Electron's app.getPath('userData') so the CLI and the window share one library. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PSKILLS_DATA_DIR) return resolve(env.PSKILLS_DATA_DIR);
  const home = homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', PRODUCT_NAME);
  if (process.platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), PRODUCT_NAME);
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), PRODUCT_NAME);
}

export const RENDERER_DIR = join(APP_ROOT, 'out', 'renderer');

/** The bundle the studio runs when none is named. */
export const DEFAULT_BUNDLE_DIR = join(APP_ROOT, 'resources', 'bundles', 'default');
