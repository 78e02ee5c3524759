// The read gate (main/files/read-gate.ts, docs/security.md "Files a user points us at") on hostile
// PEFT and bundle folders: a symlink to /dev/zero, a sparse 1.5 GB file and a FIFO. Before the gate
// the first two grew the process past 2.6 and 3.2 GB and the FIFO hung the read (and with it the
// thread pool) forever. Each must now be refused at once, naming the file, the kind and its limit,
// by the API (both transports) and the CLI, with the CLI process's peak RSS under 1 GB.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGated } from '../../../main/files/read-gate';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { direct, failure, studioSuite, transports, withStudio } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const WEIGHTS = 'adapter_model.safetensors';
let work: string;

type Hostile = { name: string; make(path: string): void; says: RegExp };
const HOSTILE: Hostile[] = [
  {
    name: 'a symlink to /dev/zero',
    make: (p) => symlinkSync('/dev/zero', p),
    says: /not a regular file \(character device \(symbolic link to \/dev\/zero\)\); not opened/,
  },
  {
    name: 'a sparse 1.5 GB file',
    make: (p) => {
      writeFileSync(p, '');
      truncateSync(p, 1.5 * 1024 ** 3);
    },
    says: /1,610,612,736 bytes, over the 512 MiB limit for a PEFT adapter_model\.safetensors; not read/,
  },
  {
    name: 'a FIFO',
    make: (p) => execFileSync('mkfifo', [p]),
    says: /not a regular file \(FIFO\); not opened/,
  },
];

/** A valid PEFT folder whose weights file is replaced by `h`. */
async function hostilePeft(h: Hostile, i: number): Promise<string> {
  const dir = join(work, `peft-${i}`);
  await writeFixturePeft(dir, 1);
  unlinkSync(join(dir, WEIGHTS));
  h.make(join(dir, WEIGHTS));
  return dir;
}

/** The fixture bundle with its tokenizer.json replaced by `h`. */
function hostileBundle(h: Hostile, i: number, file = 'tokenizer.json'): string {
  const dir = join(work, `bundle-${i}-${file}`);
  cpSync(FIXTURE_BUNDLE, dir, { recursive: true });
  unlinkSync(join(dir, file));
  h.make(join(dir, file));
  return dir;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'pskills-read-gate-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('readGated', () => {
  it('refuses each hostile file before reading it, and reads a regular one', async () => {
    for (const [i, h] of HOSTILE.entries()) {
      const p = join(work, `lone-${i}`);
      h.make(p);
      await expect(readGated(p, 'PEFT adapter_model.safetensors')).rejects.toThrow(h.says);
    }
    writeFileSync(join(work, 'plain'), 'abc');
    symlinkSync(join(work, 'plain'), join(work, 'link'));
    expect((await readGated(join(work, 'link'), 'SKILL.md')).toString()).toBe('abc');
    await expect(readGated(join(work, 'nothing'), 'SKILL.md')).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe.each(transports)('hostile PEFT and bundle files over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-read-gate-data-', { defaultBundleDir: FIXTURE_BUNDLE });

  it('adapters.import and engine.loadBundle refuse each, naming the file', async () => {
    for (const [i, h] of HOSTILE.entries()) {
      const dir = await hostilePeft(h, i + 10 * transports.indexOf(transport));
      const err = await failure(s.api.adapters.import({ dir }));
      expect(err.code).toBe('invalid_input');
      expect(err.message).toContain(join(dir, WEIGHTS));
      expect(err.message).toMatch(h.says);
    }
    const fifo = HOSTILE[2]!;
    for (const file of ['tokenizer.json', 'bundle.json']) {
      const dir = hostileBundle(fifo, 20 + transports.indexOf(transport), file);
      const err = await failure(s.api.engine.loadBundle({ dir }));
      expect(err.message).toContain(join(dir, file));
      expect(err.message).toMatch(fifo.says);
    }
    const zero = hostileBundle(HOSTILE[0]!, 30 + transports.indexOf(transport), 'bundle.json');
    expect((await failure(s.api.engine.loadBundle({ dir: zero }))).message).toMatch(HOSTILE[0]!.says);
    // The server still answers: nothing was left blocked in the thread pool.
    expect((await s.api.engine.loadBundle({ dir: FIXTURE_BUNDLE })).loaded).toBe(true);
  });
});

describe('pskills adapters import / generate --bundle on hostile files', () => {
  it('exits at once with the reason, its peak RSS under 1 GB', async () => {
    const dataDir = mkdtempSync(join(work, 'cli-'));
    // The library must know the bundle before an import: made once, in-process.
    await withStudio(({ api }) => api.engine.loadBundle({ dir: FIXTURE_BUNDLE }), { dataDir }, direct);
    for (const [i, h] of HOSTILE.entries()) {
      const dir = await hostilePeft(h, 40 + i);
      const r = spawnSync(
        '/usr/bin/time',
        [
          '-f',
          'maxrss_kb=%M',
          process.execPath,
          BIN,
          'adapters',
          'import',
          dir,
          '--bundle',
          FIXTURE_BUNDLE,
          '--data-dir',
          dataDir,
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.error, h.name).toBeUndefined(); // not killed by the timeout: a FIFO no longer hangs
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(h.says);
      const kb = Number(/maxrss_kb=(\d+)/.exec(r.stderr)?.[1]);
      expect(kb, `${h.name}: peak RSS ${kb} kB`).toBeLessThan(1024 * 1024);
      console.log(`${h.name}: pskills adapters import peak RSS ${(kb / 1024).toFixed(0)} MiB`);
    }
    const bundle = hostileBundle(HOSTILE[2]!, 50, 'bundle.json');
    const g = spawnSync(
      process.execPath,
      [BIN, 'generate', '--bundle', bundle, '--prompt', 'x', '--data-dir', dataDir],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(g.error).toBeUndefined();
    expect(g.status).not.toBe(0);
    expect(g.stderr).toMatch(/bundle\.json: not a regular file \(FIFO\); not opened/);
  });
});
