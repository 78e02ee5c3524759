// Import size caps: an archive or folder past the entry or byte cap is refused
// as a whole, before more than the cap is held in memory.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IMPORT_LIMITS, MAX_SKILL_BYTES } from '../../../main/skills/sources/file-checks';
import { scanFolder } from '../../../main/skills/sources/folder';
import { scanTgz } from '../../../main/skills/sources/tgz';
import { skillMd } from '../../fixtures/skills/skill-md';
import { tgzBytes, type TarEntry } from '../../fixtures/skills/tar-bytes';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pskills-limits-'));
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

/** A valid SKILL.md padded with spaces to exactly `size` bytes: compresses to almost nothing. */
function padded(name: string, size: number): string {
  const text = skillMd({ name });
  return text + ' '.repeat(size - Buffer.byteLength(text));
}

async function archive(entries: TarEntry[]): Promise<string> {
  const file = join(tmp, 'bomb.tgz');
  await writeFile(file, tgzBytes(entries));
  return file;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as Error & { code?: string },
  );

describe('import limits', () => {
  it('documents the caps: 100,000 entries and 64 MiB of SKILL.md/package.json bytes', () => {
    expect(IMPORT_LIMITS).toEqual({ entries: 100_000, bytes: 64 * 1024 * 1024 });
  });

  it('refuses a .tgz whose SKILL.md files add up to more than 64 MiB', async () => {
    const count = IMPORT_LIMITS.bytes / MAX_SKILL_BYTES + 1; // each entry is allowed on its own
    const entries = Array.from({ length: count }, (_, i) => ({
      path: `package/s${i}/SKILL.md`,
      body: padded(`s${i}`, MAX_SKILL_BYTES),
    }));
    const file = await archive(entries);
    const err = await failure(scanTgz(file));
    expect(err).toMatchObject({ name: 'StudioError', code: 'import_failed' });
    expect(err?.message).toBe(
      `${file} rejected: its SKILL.md and package.json files add up to more than 64 MiB (the import limit); nothing was imported`,
    );
  });

  it('accepts a .tgz right at the byte cap', async () => {
    const count = IMPORT_LIMITS.bytes / MAX_SKILL_BYTES;
    const entries = Array.from({ length: count }, (_, i) => ({
      path: `package/s${i}/SKILL.md`,
      body: padded(`s${i}`, MAX_SKILL_BYTES),
    }));
    const scan = await scanTgz(await archive(entries));
    expect(scan.candidates).toHaveLength(count);
  });

  it('refuses a .tgz with more than 100,000 entries, counting entries that are not skills', async () => {
    const entries: TarEntry[] = Array.from({ length: IMPORT_LIMITS.entries + 1 }, (_, i) => ({
      path: `package/f${i}`,
    }));
    const file = await archive(entries);
    const err = await failure(scanTgz(file));
    expect(err).toMatchObject({ code: 'import_failed' });
    expect(err?.message).toBe(
      `${file} rejected: it holds more than 100,000 entries (the import limit); nothing was imported`,
    );
  });

  it('refuses a folder past its entry or byte cap, naming the folder', async () => {
    const root = join(tmp, 'root');
    for (let i = 0; i < 4; i++) {
      await mkdir(join(root, `s${i}`), { recursive: true });
      await writeFile(join(root, `s${i}`, 'SKILL.md'), padded(`s${i}`, 1000));
    }
    expect((await scanFolder(root, { limits: { entries: 8, bytes: 4000 } })).candidates).toHaveLength(4);
    const bytes = await failure(scanFolder(root, { limits: { entries: 8, bytes: 3999 } }));
    expect(bytes?.message).toBe(
      `${root} rejected: its SKILL.md files add up to more than 3,999 bytes (the import limit); nothing was imported`,
    );
    const entries = await failure(scanFolder(root, { limits: { entries: 7, bytes: 4000 } }));
    expect(entries?.message).toBe(
      `${root} rejected: it holds more than 7 entries (the import limit); nothing was imported`,
    );
  });
});
