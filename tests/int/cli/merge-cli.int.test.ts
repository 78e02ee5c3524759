// `pskills merge --rehearse` as a user runs it, on the tiny bundle with a train-step graph
// (tests/fixtures/bundle-tiny-train): it says when the rehearsal starts, Ctrl-C (SIGINT) stops it
// between steps with a one-line message and exit status 1, and nothing is stored; uninterrupted, it
// stores the rehearsed merge and --json prints no progress.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PSKILLS_BIN, pskillsIn } from './spawn-cli';
import { greetSkill as skill, TRAIN_BUNDLE } from '../adapters/greet-skill';

let dataDir: string;
let src: string;
const pskills = pskillsIn(() => dataDir, 120_000);
const ids: string[] = [];
const count = () => (JSON.parse(pskills('adapters', 'list', '--json').out) as unknown[]).length;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-merge-cli-'));
  src = mkdtempSync(join(tmpdir(), 'pskills-merge-cli-src-'));
  for (const [name, word] of [
    ['greet', 'tests'],
    ['wave', 'hello'],
  ] as const) {
    mkdirSync(join(src, name));
    writeFileSync(join(src, name, 'SKILL.md'), skill(name, word));
  }
  expect(pskills('import', src, '--json').code).toBe(0);
  for (const name of ['greet', 'wave']) {
    const r = pskills('compile', name, '--bundle', TRAIN_BUNDLE, '--distill', '--steps', '1', '--json');
    expect(r.code, r.err).toBe(0);
    ids.push((JSON.parse(r.out) as { adapter: string }).adapter);
  }
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

/** `pskills merge … --rehearse 400`, sent SIGINT once it says the rehearsal started. */
function interrupted(): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve, reject) => {
    const args = ['merge', ...ids, '--method', 'cat', '--rehearse', '400', '--bundle', TRAIN_BUNDLE];
    const child = spawn(process.execPath, [PSKILLS_BIN, ...args, '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let sent = false;
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      if (!sent && /rehearsing 400 steps/.test(err)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, err }));
  });
}

describe('pskills merge --rehearse', () => {
  it('Ctrl-C stops the rehearsal, says nothing was stored, and stores nothing', async () => {
    const before = count();
    const r = await interrupted();
    expect(r.err).toMatch(/merged; rehearsing 400 steps/);
    expect(r.err).toMatch(/^pskills: merge cancelled; nothing was stored$/m);
    expect(r.code).toBe(1);
    expect(count()).toBe(before);
  });

  it('uninterrupted, stores the rehearsed merge; --json prints no progress', () => {
    const r = pskills('merge', ...ids, '--method', 'cat', '--rehearse', '2', '--bundle', TRAIN_BUNDLE, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ adapter: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(r.err).not.toMatch(/rehears/);
  });
});
