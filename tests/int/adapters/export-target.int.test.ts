// Where an adapter export may write: a new folder, an empty one, or (only with overwrite: true /
// --force) a previous export of ours (its pskills.json). Anything else is refused and left exactly as
// it was; a folder that cannot be created fails at once, naming it (docs/security.md).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPeftDir } from '../../../main/adapters/peft-dir';
import { direct, failure, studioSuite } from '../api/transports';
import { FIXTURE_BUNDLE, writeFixturePeft } from './fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const OURS = ['adapter_config.json', 'adapter_model.safetensors', 'pskills.json'];
const s = studioSuite(direct, 'pskills-export-target-data-', { defaultBundleDir: FIXTURE_BUNDLE });
let work: string;
let id: string;

/** Every file and folder under `dir` with its bytes: what "left unchanged" is checked against. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        out[`${relative(dir, p)}/`] = '';
        walk(p);
      } else out[relative(dir, p)] = readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

/** Names only: the open database's -wal/-shm bytes change by themselves. */
const names = (dir: string) => Object.keys(snapshot(dir));

function foreignFolder(name: string): string {
  const dir = join(work, name);
  mkdirSync(join(dir, 'sub'), { recursive: true });
  writeFileSync(join(dir, 'precious.txt'), 'x\n');
  writeFileSync(join(dir, 'sub', 'notes.md'), '# mine\n');
  return dir;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'pskills-export-target-'));
  await writeFixturePeft(join(work, 'peft'), 1);
  id = (await s.api.adapters.import({ dir: join(work, 'peft') })).adapter.id;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('adapters.export target folder', () => {
  it('refuses a non-empty foreign folder, naming it, and leaves it unchanged', async () => {
    const dir = foreignFolder('foreign');
    const before = snapshot(dir);
    const err = await failure(s.api.adapters.export({ id, dir }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain(dir);
    expect(err.message).toMatch(/not empty and not a previous adapter export/);
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(work).filter((f) => f.startsWith('.'))).toEqual([]); // no temp folder left
  });

  it('refuses the data dir and keeps the library', async () => {
    const before = names(s.dataDir);
    const err = await failure(s.api.adapters.export({ id, dir: s.dataDir }));
    expect(err.message).toContain(s.dataDir);
    expect(names(s.dataDir)).toEqual(before);
    expect((await s.api.adapters.list({})).map((a) => a.id)).toEqual([id]);
  });

  it('refuses a file, and a folder whose pskills.json is not our sidecar', async () => {
    const file = join(work, 'a-file');
    writeFileSync(file, 'keep');
    expect((await failure(s.api.adapters.export({ id, dir: file }))).message).toMatch(
      /a-file: exists and is not a folder/,
    );
    expect(readFileSync(file, 'utf8')).toBe('keep');
    const fake = join(work, 'fake');
    mkdirSync(fake);
    writeFileSync(join(fake, 'pskills.json'), '{"name": "some other tool"}');
    writeFileSync(join(fake, 'adapter_config.json'), '{"mine": true}');
    const before = snapshot(fake);
    expect((await failure(s.api.adapters.export({ id, dir: fake }))).message).toContain(fake);
    expect(snapshot(fake)).toEqual(before);
  });

  it('writes into a new folder and into an empty one', async () => {
    for (const dir of [join(work, 'new', 'deep'), join(work, 'empty')]) {
      if (dir.endsWith('empty')) mkdirSync(dir);
      expect((await s.api.adapters.export({ id, dir })).dir).toBe(dir);
      expect(readdirSync(dir).sort()).toEqual(OURS);
      expect((await readPeftDir(dir)).adapter.rank).toBe(4);
    }
  });

  it('re-exports over its previous export only with overwrite: true, replacing only its three files', async () => {
    const dir = join(work, 'again');
    await s.api.adapters.export({ id, dir });
    writeFileSync(join(dir, 'README.md'), 'the user added this');
    writeFileSync(join(dir, 'adapter_config.json'), '{"stale": true}');
    const before = snapshot(dir);
    const refused = await failure(s.api.adapters.export({ id, dir }));
    expect(refused.code).toBe('conflict');
    expect(refused.message).toMatch(/earlier adapter export; not overwritten/);
    expect(snapshot(dir)).toEqual(before);
    await s.api.adapters.export({ id, dir, overwrite: true });
    expect(readdirSync(dir).sort()).toEqual(['README.md', ...OURS]);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('the user added this');
    expect((await readPeftDir(dir)).adapter.rank).toBe(4);
  });

  it('fails at once, naming the folder, where a parent cannot be created (/proc/nope)', async () => {
    const err = await failure(s.api.adapters.export({ id, dir: '/proc/nope/x' }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/cannot create folder \/proc\/nope \(ENOENT\)/);
  });

  it('refuses a relative path at the API', async () => {
    for (const dir of ['out', './out', '../out']) {
      const err = await failure(s.api.adapters.export({ id, dir }));
      expect(err.code).toBe('invalid_input');
      expect(err.message).toMatch(/absolute path/);
    }
    expect((await failure(s.api.adapters.import({ dir: 'peft' }))).message).toMatch(/absolute path/);
    expect((await failure(s.api.engine.loadBundle({ dir: 'tests/fixtures/bundle-tiny' }))).message).toMatch(
      /absolute path/,
    );
  });
});

describe('pskills adapters export --out', () => {
  const pskills = (...args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args, '--data-dir', s.dataDir], {
      encoding: 'utf8',
      timeout: 60_000,
      cwd: work,
    });

  it('refuses a non-empty foreign folder with exit 2 and leaves it unchanged', async () => {
    await s.close(); // the CLI opens the same data dir
    const dir = foreignFolder('V');
    const before = snapshot(dir);
    const r = pskills('adapters', 'export', id, '--out', 'V');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(dir);
    expect(snapshot(dir)).toEqual(before);
    const data = names(s.dataDir);
    expect(pskills('adapters', 'export', id, '--out', s.dataDir).status).toBe(2);
    expect(names(s.dataDir)).toEqual(data);
    expect(JSON.parse(pskills('adapters', 'list', '--json').stdout)).toHaveLength(1);
    expect(pskills('adapters', 'export', id, '--out', 'fresh').status).toBe(0);
    expect(readdirSync(join(work, 'fresh')).sort()).toEqual(OURS);
    const again = pskills('adapters', 'export', id, '--out', 'fresh');
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/not overwritten \(pass --force/);
    expect(pskills('adapters', 'export', id, '--out', 'fresh', '--force').status).toBe(0);
  });

  it('returns at once with /proc/nope/x, naming the folder it cannot create', () => {
    const r = pskills('adapters', 'export', id, '--out', '/proc/nope/x');
    expect(r.error).toBeUndefined(); // not killed by the timeout
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot create folder \/proc\/nope/);
  });
});
