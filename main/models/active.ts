// The bundle the user made active on the Models page, remembered across restarts in
// <data folder>/bundles/active.json (written to a temp name, then renamed), so the studio and the
// CLI on that data folder start with it instead of the shipped default.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST_FILE } from '../engine/manifest';

const FILE = 'active.json';

/** The remembered bundle folder, or null: none chosen, unreadable, or no longer a bundle. */
export function readActive(userDir: string): string | null {
  try {
    const { dir } = JSON.parse(readFileSync(join(userDir, FILE), 'utf8')) as { dir?: unknown };
    return typeof dir === 'string' && existsSync(join(dir, MANIFEST_FILE)) ? dir : null;
  } catch {
    return null;
  }
}

export function writeActive(userDir: string, dir: string): void {
  mkdirSync(userDir, { recursive: true });
  const tmp = join(userDir, `.${FILE}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify({ dir }) + '\n');
  renameSync(tmp, join(userDir, FILE));
}
