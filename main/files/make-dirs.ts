// Creating a folder and its missing parents, failing at once with the folder that could not be made.
// Node's `mkdir(…, {recursive: true})` loops forever where a parent exists but refuses children
// with ENOENT (/proc/nope/x: it retries mkdir("/proc/nope") without end), so every target the user
// names goes through this instead: one plain mkdir per missing level, parents first
// (docs/security.md "Writing where the user says").
import { lstat, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { StudioError } from '../../common/errors';

function cannot(dir: string, err: NodeJS.ErrnoException | string): StudioError {
  const why = typeof err === 'string' ? err : (err.code ?? err.message);
  return new StudioError('invalid_input', `cannot create folder ${dir} (${why})`, { path: dir });
}

/** The levels of `dir` that do not exist yet, outermost first; throws when an existing one is not a folder. */
async function missingLevels(dir: string): Promise<string[]> {
  const levels: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    const info = await lstat(at).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw cannot(at, e);
    });
    if (info) {
      if (!info.isDirectory() && !(info.isSymbolicLink() && (await isDirFollowing(at))))
        throw cannot(at, 'it exists and is not a folder');
      return levels.reverse();
    }
    levels.push(at);
    if (dirname(at) === at) return levels.reverse();
  }
}

async function isDirFollowing(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

/** mkdir -p that returns or throws at once, naming the folder it could not create. */
export async function makeDirs(dir: string): Promise<void> {
  for (const level of await missingLevels(dir)) {
    try {
      await mkdir(level);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw cannot(level, e as NodeJS.ErrnoException);
    }
  }
}
