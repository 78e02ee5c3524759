// `pskills trajectories list|show|rate|export|import` and `pskills settings` as a user runs them: a
// child process, JSON on stdout, one-line errors naming the bad line, nothing imported on error.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
let dataDir: string;

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

const line = (over: object) =>
  JSON.stringify({
    skill: 'git-bisect',
    skill_text: '---\nname: git-bisect\ndescription: Find a bad commit.\n---\n\n# Git bisect\n',
    messages: [
      { role: 'user', content: 'Which commit broke the build?' },
      { role: 'assistant', content: 'Run git bisect start, then mark good and bad commits.' },
    ],
    source: 'compare',
    skill_version: 1,
    created_at: '2025-05-01T10:00:00.000Z',
    ...over,
  });

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-traj-cli-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('pskills trajectories', () => {
  it('import → list → show → rate → export (file and stdout) → import again', () => {
    const file = join(dataDir, 'in.jsonl');
    writeFileSync(
      file,
      [
        line({ id: 'a'.repeat(32) }),
        line({
          id: 'b'.repeat(32),
          source: 'playground',
          skill: null,
          skill_text: null,
          skill_version: null,
          created_at: '2025-05-02T10:00:00.000Z',
        }),
      ].join('\n') + '\n',
    );
    const imp = pskills('trajectories', 'import', file, '--json');
    expect(imp.code, imp.err).toBe(0);
    expect(JSON.parse(imp.out)).toEqual({ imported: 2, unchanged: 0, updated: 0 });

    const list = JSON.parse(pskills('trajectories', 'list', '--json').out) as {
      total: number;
      items: { id: string; source: string }[];
    };
    expect(list.total).toBe(2);
    expect(list.items.map((t) => t.source)).toEqual(['playground', 'compare']); // newest first
    expect(JSON.parse(pskills('trajectories', 'list', '--skill', 'git-bisect', '--json').out)).toMatchObject({
      total: 1,
    });
    const text = pskills('trajectories', 'list');
    expect(text.out.split('\n')[1]).toMatch(
      /^aaaaaaaaaaaa\t2025-05-01T10:00:00.000Z\tcompare\tgit-bisect@1\t-\t-\tWhich commit broke the build\?$/,
    );

    const show = pskills('trajectories', 'show', 'aaaaaa');
    expect(show.code, show.err).toBe(0);
    expect(show.out).toContain('skill git-bisect@1 (not in this library)');
    expect(show.out).toContain('== assistant\nRun git bisect start');

    expect(pskills('trajectories', 'rate', 'aaaaaa', 'up', '--note', 'right').out.trim()).toBe('aaaaaaaaaaaa rated up');

    const out = join(dataDir, 'out.jsonl');
    expect(JSON.parse(pskills('trajectories', 'export', '--jsonl', '--out', out, '--json').out)).toMatchObject({
      file: out,
      count: 2,
    });
    const stdout = pskills('trajectories', 'export', '--jsonl');
    expect(stdout.out).toBe(readFileSync(out, 'utf8'));
    const stage2 = pskills('trajectories', 'export', '--stage2').out.trim().split('\n');
    expect(stage2.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['a'.repeat(32)]);
    expect(JSON.parse(pskills('trajectories', 'import', out, '--json').out)).toEqual({
      imported: 0,
      unchanged: 2,
      updated: 0,
    });
  });

  it('a bad line: exit 2, one line on stderr naming it, nothing imported', () => {
    const file = join(dataDir, 'bad.jsonl');
    writeFileSync(
      file,
      [
        line({ id: 'c'.repeat(32) }),
        line({ id: 'd'.repeat(32), messages: [{ role: 'robot', content: 'x' }] }),
        line({ id: 'e'.repeat(32) }),
      ].join('\n') + '\n',
    );
    const r = pskills('trajectories', 'import', file);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^pskills: line 2: messages\.0\.role: .*; nothing was imported\n$/);
    expect(JSON.parse(pskills('trajectories', 'list', '--json').out)).toMatchObject({ total: 2 });
  });

  it('settings show / set turn storing off and on', () => {
    expect(JSON.parse(pskills('settings', 'show', '--json').out)).toEqual({
      storeTrajectories: true,
      llmBaseUrl: null,
      llmModel: null,
      llmApiKey: null,
      executionProvider: 'cpu',
      maxMergeRank: 512,
    });
    expect(pskills('settings', 'set', 'storeTrajectories', 'false').out.trim()).toBe('storeTrajectories\tfalse');
    expect(JSON.parse(pskills('settings', 'show', '--json').out)).toEqual({
      storeTrajectories: false,
      llmBaseUrl: null,
      llmModel: null,
      llmApiKey: null,
      executionProvider: 'cpu',
      maxMergeRank: 512,
    });
    const bad = pskills('settings', 'set', 'storeTrajectories', 'maybe');
    expect(bad.code).toBe(2);
    expect(pskills('settings', 'set', 'nope', 'true').err).toMatch(/no setting "nope"/);
  });
});
