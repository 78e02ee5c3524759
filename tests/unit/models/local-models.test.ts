// The scan of LM Studio's and Ollama's folders (main/models/local-models.ts, docs/security.md "GGUF
// files"). A folder of 60,000 files and 1,500 sparse 1 MiB Ollama manifests held the web host's event
// loop 2.2 s: the walk, the sort and the manifest reads ran synchronously. Now the walk yields between
// batches, a folder is read up to a cap and the cut is listed in `skipped`, and a manifest that is a FIFO,
// a link to /dev/zero or over the manifest cap is listed in `skipped` with why, not passed over.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GgufReader } from '../../../main/models/gguf-reader';
import { findLocalModels, SCAN_LIMITS, type ModelFolder } from '../../../main/models/local-models';
import { buildCase, CASES } from './gguf-cases';

const home = mkdtempSync(join(tmpdir(), 'pskills-local-models-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const byName = (part: string) => CASES.cases.find((c) => c.name.includes(part))!;

const lms = join(home, 'lmstudio');
const ollama = join(home, 'ollama');
const folders: ModelFolder[] = [
  { app: 'lmstudio', dir: lms },
  { app: 'ollama', dir: ollama },
];
const manifest = (digit: string) =>
  JSON.stringify({
    layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digit.repeat(64)}` }],
  });
/** Ollama's manifests/<registry>/<namespace>/<model>/<tag>. */
const tagDir = (model: string) => join(ollama, 'manifests', 'registry.ollama.ai', 'library', model);

// LM Studio: one good header among 3,000 other files in one folder.
const many = join(lms, 'pub', 'many');
mkdirSync(many, { recursive: true });
for (let i = 0; i < 3_000; i++) writeFileSync(join(many, `note-${i}.txt`), '');
buildCase(byName('a valid llama header'), many, 'ok.gguf');
// And a folder of 3,000 files and no model at all: nothing for the header worker to wait on.
const notes = join(home, 'notes', 'pub', 'notes');
mkdirSync(notes, { recursive: true });
for (let i = 0; i < 3_000; i++) writeFileSync(join(notes, `note-${i}.txt`), '');
// Ollama: a good manifest and blob, then manifests that are a FIFO, a link to /dev/zero, a sparse 1 MiB
// file, and one that is not JSON.
mkdirSync(join(ollama, 'blobs'), { recursive: true });
buildCase(byName('a valid llama header'), join(ollama, 'blobs'), `sha256-${'1'.repeat(64)}`);
for (const m of ['good', 'fifo', 'zero', 'big', 'text']) mkdirSync(tagDir(m), { recursive: true });
writeFileSync(join(tagDir('good'), 'latest'), manifest('1'));
execFileSync('mkfifo', [join(tagDir('fifo'), 'latest')]);
symlinkSync('/dev/zero', join(tagDir('zero'), 'latest'));
const big = openSync(join(tagDir('big'), 'latest'), 'w');
ftruncateSync(big, 1 << 20);
closeSync(big);
writeFileSync(join(tagDir('text'), 'latest'), 'not json');

describe('findLocalModels', () => {
  it('lets the event loop turn while it walks a big folder (it used to run to the end in one turn)', async () => {
    const reader = new GgufReader();
    try {
      let turns = 0;
      let done = false;
      const tick = () => {
        turns++;
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      const scan = findLocalModels([{ app: 'lmstudio', dir: join(home, 'notes') }], reader);
      const { found, skipped } = await scan.finally(() => (done = true));
      expect([found, skipped]).toEqual([[], []]);
      // 3,000 entries read in batches of 64 through the thread pool: the loop turned between them. The
      // synchronous walk finished before any other callback ran (0 turns).
      expect(turns).toBeGreaterThan(10);
    } finally {
      await reader.dispose();
    }
  });

  it('lists bad Ollama manifests in skipped with why, beside the good one', async () => {
    const reader = new GgufReader();
    try {
      const { found, skipped } = await findLocalModels([{ app: 'ollama', dir: ollama }], reader);
      expect(found.map((m) => m.label)).toEqual(['good:latest']);
      const why = Object.fromEntries(skipped.map((s) => [s.label, s.reason]));
      expect(why).toEqual({
        'big:latest': 'manifest: 1,048,576 bytes, over the 65,536 bytes limit for an Ollama manifest; not read',
        'fifo:latest': 'manifest: not a regular file (FIFO); not opened',
        'text:latest': 'manifest: not valid JSON',
        'zero:latest': 'manifest: not a regular file (character device (symbolic link to /dev/zero)); not opened',
      });
      expect(skipped.find((s) => s.label === 'fifo:latest')?.path).toBe(join(tagDir('fifo'), 'latest'));
    } finally {
      await reader.dispose();
    }
  });

  it('reads a folder up to its cap and lists the cut in skipped', async () => {
    const reader = new GgufReader();
    try {
      const limits = { ...SCAN_LIMITS, entriesPerFolder: 1_000 };
      const { skipped } = await findLocalModels(folders, reader, new Map(), limits);
      const cut = skipped.find((s) => s.path === many);
      expect(cut).toMatchObject({ app: 'lmstudio', label: 'pub/many/' });
      expect(cut?.reason).toBe(
        'more than 1,000 entries in one folder; the first 1,000 the system listed were read, the rest not',
      );
      // The files cap: one model file looked at, then the scan stops and says so once.
      const few = await findLocalModels(folders, reader, new Map(), { ...SCAN_LIMITS, files: 1 });
      expect(few.found).toHaveLength(1);
      expect(few.skipped.map((s) => s.reason)).toEqual([
        'more than 1 model files and manifests; the rest were not read',
      ]);
    } finally {
      await reader.dispose();
    }
  });
});
