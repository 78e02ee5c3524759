// The smaller defects of hardening round 4 (docs/security.md), over the in-memory pair and the web
// host, and from the CLI where the path exists: `pskills doctor` on a studio.db that is empty, a link
// to /dev/zero or a FIFO (it said ok, or hung); a distill lr of 1e-300 (it returned the instant adapter
// as if distilled); skill names with '@', the version separator; a NUL in trajectories.export's path
// (500 internal) and in import.run's source ("does not exist"); adapters.rename with U+202E; a safetensors header claiming 450 MB (named the file
// size, not the header cap); and an unknown /v1 model (a 404 listing every model).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectImport } from '../../../main/skills/importer';
import { skillMd } from '../../fixtures/skills/skill-md';
import { FIXTURE_BUNDLE, writeFixturePeft } from '../adapters/fixture';
import { failure, studioSuite, transports, withRoutes } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'pskills-round4-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('pskills doctor on a studio.db that is no library', () => {
  const cases: [string, (file: string) => void, RegExp][] = [
    ['an empty file', (f) => writeFileSync(f, ''), /not a library: it is empty \(0 bytes\)/],
    [
      'a link to /dev/zero',
      (f) => symlinkSync('/dev/zero', f),
      /not a library: not a regular file \(character device \(symbolic link to \/dev\/zero\)\); not opened/,
    ],
    ['a FIFO', (f) => execFileSync('mkfifo', [f]), /not a library: not a regular file \(FIFO\); not opened/],
  ];
  it.each(cases)('%s: exit 1 at once with why, never ok', (_name, make, says) => {
    const dataDir = mkdtempSync(join(work, 'doctor-'));
    make(join(dataDir, 'studio.db'));
    const r = spawnSync(process.execPath, [BIN, 'doctor', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.error).toBeUndefined(); // a FIFO used to hang it until the timeout
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(says);
    const json = spawnSync(process.execPath, [BIN, 'doctor', '--json', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ exists: true, ok: false });
    // Every other command refuses it the same way.
    const list = spawnSync(process.execPath, [BIN, 'skills', 'list', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(list.status).not.toBe(0);
    expect(list.stderr).toMatch(/nothing was written to it/);
  });
});

// SQLite opens the files beside studio.db too: a FIFO studio.db-journal held every command and `pskills
// doctor` for good (its hot-journal check opens it), a FIFO studio.db-wal or -shm answered "disk I/O error".
// Each is refused before SQLite opens anything, naming the file, and a symbolic link loop as studio.db is
// not called "no library yet".
describe('pskills doctor and commands beside a studio.db whose companion files are no files', () => {
  it.each(['journal', 'wal', 'shm'])('a FIFO studio.db-%s: exit 1 at once, naming it', (suffix) => {
    const dataDir = mkdtempSync(join(work, 'companion-'));
    const made = spawnSync(process.execPath, [BIN, 'skills', 'list', '--data-dir', dataDir], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0); // a good library
    rmSync(join(dataDir, `studio.db-${suffix}`), { force: true });
    execFileSync('mkfifo', [join(dataDir, `studio.db-${suffix}`)]);
    const says = new RegExp(`studio\\.db-${suffix}: not a regular file \\(FIFO\\); not opened`);
    const doctor = spawnSync(process.execPath, [BIN, 'doctor', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(doctor.error).toBeUndefined(); // the journal FIFO hung it until the timeout
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(says);
    const list = spawnSync(process.execPath, [BIN, 'skills', 'list', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(list.error).toBeUndefined();
    expect(list.status).not.toBe(0);
    expect(list.stderr).toMatch(says);
  });

  it('a symbolic link loop as studio.db is no library, not "no library yet"', () => {
    const dataDir = mkdtempSync(join(work, 'loop-'));
    symlinkSync('studio.db', join(dataDir, 'studio.db'));
    const r = spawnSync(process.execPath, [BIN, 'doctor', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/studio\.db: not a library: .*ELOOP/);
  });
});

describe.each(transports)('over $name', (transport) => {
  const s = studioSuite(transport, 'pskills-round4-data-', { defaultBundleDir: FIXTURE_BUNDLE });

  it('refuses a distill lr that changes nothing, saying why', async () => {
    await s.api.skills.create({ name: 'lr-skill' });
    for (const lr of [1e-300, 1e-7]) {
      const err = await failure(s.api.adapters.distill({ skill: { name: 'lr-skill' }, lr }, () => {}).result);
      expect(err.code).toBe('invalid_input');
      expect(err.message).toMatch(/invalid input at "lr": at least 1e-6: a smaller learning rate changes no weight/);
    }
  });

  it("refuses '@' in a new skill's name, in create and in a saved SKILL.md", async () => {
    const err = await failure(s.api.skills.create({ name: 'amb@1' }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/name has '@' at position 4, the separator of a version/);
    await s.api.skills.create({ name: 'amb' });
    const saved = await failure(s.api.skills.save({ name: 'amb', content: skillMd({ name: 'amb@1' }) }));
    expect(saved.message).toMatch(/name has '@' at position 4/);
    expect((await s.api.skills.list({})).map((k) => k.name).sort()).toEqual(['amb', 'lr-skill']);
  });

  it('answers a NUL in trajectories.export’s path with invalid_input naming the field', async () => {
    const err = await failure(s.api.trajectories.export({ file: `${s.dataDir}/a\u0000b.jsonl` }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/invalid input at "file": must not contain a NUL character/);
  });

  it('answers a NUL in import.run’s source with invalid_input naming it, not "does not exist"', async () => {
    const err = await failure(s.api.import.run({ source: `${s.dataDir}/a\u0000b` }).result);
    expect(err.code).toBe('invalid_input');
    expect(err.message).toMatch(/invalid input at "source": must not contain a NUL character/);
    // The importer itself (the CLI's path) says the same, should a NUL ever reach it.
    await expect(collectImport(`${s.dataDir}/a\u0000b`, { cacheDir: join(work, 'cache') })).rejects.toThrow(
      /must not contain a NUL character/,
    );
  });

  it('adapters.rename refuses bidi controls and invisible characters as skill names do', async () => {
    const dir = join(s.dataDir, 'peft');
    await writeFixturePeft(dir, 1);
    const { adapter } = await s.api.adapters.import({ dir });
    for (const [name, cp] of [
      ['evil\u202Egnp.exe', 'U+202E'],
      ['zero\u200Bwidth', 'U+200B'],
    ]) {
      const err = await failure(s.api.adapters.rename({ id: adapter.id, name: name! }));
      expect(err.code).toBe('invalid_input');
      expect(err.message).toContain(cp);
    }
    expect((await s.api.adapters.rename({ id: adapter.id, name: 'fine name' })).name).toBe('fine name');
  });

  it('a safetensors header that claims 450 MB is refused for the header cap', async () => {
    const dir = join(s.dataDir, 'peft-450');
    await writeFixturePeft(dir, 2);
    const head = Buffer.alloc(1024);
    head.writeBigUInt64LE(450_000_000n, 0);
    writeFileSync(join(dir, 'adapter_model.safetensors'), head);
    const err = await failure(s.api.adapters.import({ dir }));
    expect(err.message).toMatch(/header length 450,000,000 bytes is over the 100 MiB cap on a safetensors header/);
  });
});

describe('imports skip a SKILL.md whose name has the version separator', () => {
  it('records it as skipped with why', async () => {
    const src = join(work, 'at');
    mkdirSync(join(src, 'amb'), { recursive: true });
    writeFileSync(join(src, 'amb', 'SKILL.md'), skillMd({ name: 'amb@1' }));
    const r = await collectImport(src, { cacheDir: join(work, 'cache') });
    expect(r.versions).toEqual([]);
    expect(r.skipped[0]!.reason).toMatch(/name has '@' at position 4, the separator of a version/);
  });
});

describe('the /v1 endpoint on an unknown model', () => {
  const host = studioSuite(withRoutes(), 'pskills-round4-host-');

  it('answers a short 404 naming the model and GET /v1/models, not a list of every model', async () => {
    for (let i = 0; i < 30; i++) await host.api.skills.create({ name: `many-${i}` });
    const res = await fetch(`${host.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe('model_not_found');
    expect(body.error.message).toBe(
      "The model 'no-such-model' does not exist; GET /v1/models lists the models served (base, global, and each skill as base:NAME@VERSION)",
    );
    expect(body.error.message).not.toContain('many-');
  });
});

describe('pskills skills create', () => {
  it("refuses '@' with exit 2", () => {
    const dataDir = mkdtempSync(join(work, 'cli-'));
    const r = spawnSync(process.execPath, [BIN, 'skills', 'create', 'amb@1', '--data-dir', dataDir], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/'@' at position 4/);
  });
});
