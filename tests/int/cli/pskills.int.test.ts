// The pskills command as a user runs it: a child process, JSON on stdout, one-line errors.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePeftDir } from '../../../main/adapters/peft-dir';
import { randomAdapter } from '../../unit/adapters/builders';

const FIXTURE_BUNDLE = join(process.cwd(), 'tests', 'fixtures', 'bundle-tiny');

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;
let src: string;

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-cli-'));
  src = mkdtempSync(join(tmpdir(), 'pskills-cli-src-'));
  mkdirSync(join(src, 'git-bisect'));
  writeFileSync(
    join(src, 'git-bisect', 'SKILL.md'),
    '---\nname: git-bisect\ndescription: Find the commit that introduced a bug with git bisect.\n---\n\n# Git bisect\n\n## Steps\n\n1. Mark a good and a bad commit.\n2. Test each commit git checks out and mark it.\n',
  );
  mkdirSync(join(src, 'binary'));
  writeFileSync(join(src, 'binary', 'SKILL.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0x01, 0x02]));
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

describe('pskills', () => {
  it('import --json prints counts and skip reasons', () => {
    const r = pskills('import', src, '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { imported: number; skipped: { path: string; reason: string }[] };
    expect(out.imported).toBe(1);
    expect(out.skipped).toHaveLength(1);
    expect(out.skipped[0]!.path).toContain('binary/SKILL.md');
    expect(out.skipped[0]!.reason).toMatch(/binary/i);
  });

  it('skills list / show --json', () => {
    const list = JSON.parse(pskills('skills', 'list', '--json').out) as unknown[];
    expect(list).toEqual([
      {
        name: 'git-bisect',
        description: 'Find the commit that introduced a bug with git bisect.',
        package: null,
        versions: 1,
      },
    ]);
    const show = JSON.parse(pskills('skills', 'show', 'git-bisect@1', '--json').out) as {
      version: { version: number };
    };
    expect(show.version.version).toBe(1);
  });

  it('skills create writes version 1 from the template; a taken name is refused with nothing written', () => {
    // Its own data folder: the serve test below counts the skills in the shared one.
    const own = mkdtempSync(join(tmpdir(), 'pskills-cli-create-'));
    const run = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', own], { encoding: 'utf8', timeout: 60_000 });
      return { code: r.status, out: r.stdout, err: r.stderr };
    };
    try {
      const r = run('skills', 'create', 'release-notes', '--json');
      expect(r.code).toBe(0);
      const created = JSON.parse(r.out) as { name: string; version: number; content: string };
      expect(created).toMatchObject({ name: 'release-notes', version: 1 });
      expect(created.content).toMatch(/^---\nname: release-notes\n/);
      const again = run('skills', 'create', 'release-notes');
      expect(again.code).not.toBe(0);
      expect(again.err.trim()).toBe(
        'pskills: a skill named "release-notes" already exists (nothing was written); choose another name',
      );
      const show = JSON.parse(run('skills', 'show', 'release-notes', '--json').out) as { history: unknown[] };
      expect(show.history).toHaveLength(1);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('errors: non-zero exit and one line on stderr', () => {
    for (const args of [
      ['skills', 'show', 'nope'],
      ['skills', 'show', 'git-bisect@0'],
      ['import', join(src, 'missing')],
      ['frobnicate'],
      ['skills', 'list', '--bogus'],
    ]) {
      const r = pskills(...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^pskills: /);
    }
  });

  it('generate streams from a bundle, with and without a PEFT adapter', async () => {
    const base = pskills(
      'generate',
      '--bundle',
      FIXTURE_BUNDLE,
      '--prompt',
      'Write the steps.',
      '--max-tokens',
      '8',
      '--json',
    );
    expect(base.code, base.err).toBe(0);
    const r = JSON.parse(base.out) as { text: string; completionTokens: number; finishReason: string };
    expect(r.completionTokens).toBeGreaterThan(0);
    const again = JSON.parse(
      pskills('generate', '--bundle', FIXTURE_BUNDLE, '--prompt', 'Write the steps.', '--max-tokens', '8', '--json')
        .out,
    ) as { text: string };
    expect(again.text).toBe(r.text); // greedy by default
    const adapterDir = join(dataDir, 'peft-random');
    const shapes = [0, 1].flatMap((layer) => [
      { layer, module: 'q', dIn: 64, dOut: 64 },
      { layer, module: 'down', dIn: 128, dOut: 64 },
    ]);
    await writePeftDir(adapterDir, randomAdapter({ seed: 11, rank: 4, alpha: 16, shapes }), {});
    const withAdapter = pskills(
      'generate',
      '--bundle',
      FIXTURE_BUNDLE,
      '--prompt',
      'Write the steps.',
      '--max-tokens',
      '8',
      '--adapter',
      adapterDir,
      '--json',
    );
    expect(withAdapter.code, withAdapter.err).toBe(0);
    expect((JSON.parse(withAdapter.out) as { text: string }).text).not.toBe(r.text);
    const wrong = randomAdapter({ seed: 12, rank: 2, shapes: [{ layer: 0, module: 'q', dIn: 32, dOut: 64 }] });
    await writePeftDir(join(dataDir, 'peft-wrong'), wrong, {});
    const bad = pskills(
      'generate',
      '--bundle',
      FIXTURE_BUNDLE,
      '--prompt',
      'x',
      '--adapter',
      join(dataDir, 'peft-wrong'),
    );
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/^pskills: .*layer 0.*q.*/);
    const noBundle = pskills('generate', '--bundle', join(dataDir, 'nothing'), '--prompt', 'x');
    expect(noBundle.code).not.toBe(0);
    expect(noBundle.err).toContain('nothing');
  });

  it('serve prints the studio line and answers with the token', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          const m = /studio: (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/.exec(buf);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
      });
      const url = new URL(line);
      const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
      const res = await fetch(`${url.origin}/api/call/skills.list`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: '{}',
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { value: unknown[] }).value).toHaveLength(1);
      expect((await fetch(`${url.origin}/api/call/skills.list`, { method: 'POST', body: '{}' })).status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
