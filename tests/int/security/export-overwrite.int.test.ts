// Nothing is overwritten without an explicit flag (docs/security.md "Writing where the user says"):
// trajectories.export refuses a file that exists unless overwrite: true (CLI --force), and with it
// writes a temp file that is renamed, so the old file is whole until the new one is.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failure, studioSuite, transports } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const MESSAGES = [
  { role: 'user' as const, content: 'q' },
  { role: 'assistant' as const, content: 'a' },
];

describe.each(transports)('trajectories.export over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-export-overwrite-');

  it('refuses a file that exists, leaving it as it was; overwrite: true replaces it whole', async () => {
    await s.api.trajectories.add({ source: 'playground', messages: MESSAGES });
    const file = join(s.dataDir, 'precious.txt');
    writeFileSync(file, 'the user wrote this\n');
    const err = await failure(s.api.trajectories.export({ file }));
    expect(err.code).toBe('conflict');
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/not overwritten \(pass --force, or overwrite: true/);
    expect(readFileSync(file, 'utf8')).toBe('the user wrote this\n');
    expect(readdirSync(s.dataDir).filter((f) => f.includes('.tmp-'))).toEqual([]);

    expect(await s.api.trajectories.export({ file, overwrite: true })).toMatchObject({ file, count: 1 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ source: 'playground' });
    expect(readdirSync(s.dataDir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('a new file is written without the flag; a missing parent fails at once, naming the file', async () => {
    const file = join(s.dataDir, 'new.jsonl');
    expect(await s.api.trajectories.export({ file })).toMatchObject({ file });
    const err = await failure(s.api.trajectories.export({ file: '/proc/nope/x.jsonl' }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain('/proc/nope/x.jsonl');
  });
});

describe('pskills trajectories export --out', () => {
  let dataDir: string;
  const pskills = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, out: r.stdout, err: r.stderr, error: r.error };
  };
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'pskills-export-overwrite-cli-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses an existing FILE (exit 1, the file untouched) unless --force', () => {
    const file = join(dataDir, 'notes.md');
    writeFileSync(file, '# mine\n');
    const r = pskills('trajectories', 'export', '--out', file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/notes\.md exists; not overwritten \(pass --force/);
    expect(readFileSync(file, 'utf8')).toBe('# mine\n');
    const forced = pskills('trajectories', 'export', '--out', file, '--force', '--json');
    expect(forced.code, forced.err).toBe(0);
    expect(JSON.parse(forced.out)).toMatchObject({ file, count: 0 });
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});
