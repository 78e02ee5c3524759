// `pskills verify` on the real default bundle (resources/bundles/default): a small skill with tests of
// each kind, run from the shell with --json, then through the API; answers are greedy and come from
// compare's generation path (the same text compare.run gives for the same prompt and condition).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { VerifierTest } from '../../../common/api/verify-schemas';
import { normalizeAnswer } from '../../../common/skillworld/check';
import { DEFAULT_BUNDLE_DIR } from '../../../main/paths';
import { direct, studioSuite } from '../api/transports';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const SKILL = `---
name: tar-archives
description: Create and unpack tar archives. Use when a user asks how to pack or unpack a .tar.gz file.
---

# Tar archives

## Steps

1. To pack a folder, run \`tar -czf out.tar.gz folder/\`.
2. To unpack, run \`tar -xzf out.tar.gz\`.
3. Always list the contents first with \`tar -tzf out.tar.gz\`.
`;
const PROMPT = 'How do I unpack a .tar.gz file?';
const TESTS: VerifierTest[] = [
  { id: 'unpack', prompt: PROMPT, expect: { kind: 'not', of: { kind: 'contains', value: 'zq-never-zq' } } },
  {
    id: 'exact-impossible',
    prompt: 'Pack the folder src.',
    expect: { kind: 'exact', value: 'tar -czf src.tar.gz src/ # written by nobody 4711' },
  },
  {
    id: 'regex-command',
    prompt: 'Which command lists an archive?',
    expect: { kind: 'regex', pattern: 'tar -[a-z]*t' },
  },
  {
    id: 'json',
    prompt: 'Reply with a JSON object with a "command" string.',
    expect: {
      kind: 'json_schema',
      schema: { type: 'object', required: ['command'], properties: { command: { type: 'string' } } },
    },
  },
];

interface CliVerify {
  pass_rate: number;
  n: number;
  passed: number;
  mode: string;
  adapter: string | null;
  tests_from: number | null;
  results: { id: string; passed: boolean; pass_rate: number; answer: string; reason: string | null }[];
}

const pskills = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', s.dataDir], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

const s = studioSuite(direct, 'pskills-verify-', { defaultBundleDir: DEFAULT_BUNDLE_DIR });

beforeAll(async () => {
  await s.api.skills.save({ name: 'tar-archives', content: SKILL });
  const file = join(s.dataDir, 'tests.json');
  writeFileSync(file, JSON.stringify(TESTS));
  const set = pskills('tests', 'set', 'tar-archives', file, '--json');
  expect(set.code, set.err).toBe(0);
});

describe('pskills verify on the default bundle', () => {
  it('reports the pass rate per test and overall with --json (--none: the base model)', () => {
    const r = pskills('verify', 'tar-archives', '--none', '--max-tokens', '24', '--json');
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as CliVerify;
    expect(out).toMatchObject({ n: 4, mode: 'none', adapter: null, tests_from: 1 });
    expect(out.results.map((t) => t.id)).toEqual(TESTS.map((t) => t.id));
    const byId = new Map(out.results.map((t) => [t.id, t]));
    expect(byId.get('unpack')).toMatchObject({ passed: true, pass_rate: 1, reason: null });
    expect(byId.get('exact-impossible')).toMatchObject({ passed: false, pass_rate: 0 });
    expect(byId.get('exact-impossible')!.reason).toMatch(/^does not pass: is exactly "/);
    expect(out.passed).toBe(out.results.filter((t) => t.passed).length);
    expect(out.pass_rate).toBeCloseTo(out.passed / 4);
    expect(byId.get('unpack')!.answer.length).toBeGreaterThan(0);
  });

  it('greedy: an exact test written from one run passes the next; in_context and instant answer as compare does', async () => {
    const none = await s.api.verify.run({ name: 'tar-archives', mode: 'none', maxTokens: 24, tests: ['unpack'] })
      .result;
    const answer = none.results[0]!.answer;
    await s.api.verify.setTests({
      name: 'tar-archives',
      tests: [...TESTS, { id: 'echo', prompt: PROMPT, expect: { kind: 'exact', value: normalizeAnswer(answer) } }],
    });
    const again = await s.api.verify.run({ name: 'tar-archives', mode: 'none', maxTokens: 24, tests: ['echo'] }).result;
    expect(again).toMatchObject({ n: 1, passed: 1, passRate: 1 });

    const compare = await s.api.compare.run({
      name: 'tar-archives',
      prompt: PROMPT,
      maxTokens: 24,
      conditions: ['none', 'in_context', 'instant'],
    }).result;
    const text = (c: string) => compare.columns.find((col) => col.condition === c)!.text;
    expect(answer).toBe(text('none'));
    const inContext = await s.api.verify.run({
      name: 'tar-archives',
      mode: 'in_context',
      maxTokens: 24,
      tests: ['unpack'],
    }).result;
    expect(inContext.results[0]!.answer).toBe(text('in_context'));
    const instant = await s.api.verify.run({ name: 'tar-archives', maxTokens: 24, tests: ['unpack'] }).result;
    expect(instant.mode).toBe('instant');
    expect(instant.adapter).toBe(compare.columns.find((c) => c.condition === 'instant')!.adapter);
    expect(instant.results[0]!.answer).toBe(text('instant'));
    // --adapter ID runs the same adapter.
    const byId = await s.api.verify.run({
      name: 'tar-archives',
      mode: 'adapter',
      adapter: instant.adapter!,
      maxTokens: 24,
      tests: ['unpack'],
    }).result;
    expect(byId.results[0]!.answer).toBe(text('instant'));
  });

  it('every verify answer is kept as an eval trajectory with its verdict', async () => {
    const kept = await s.api.trajectories.list({ source: 'eval', skill: 'tar-archives', limit: 1000 });
    expect(kept.total).toBeGreaterThanOrEqual(4 + 1 + 1 + 1 + 1 + 1);
    expect(kept.items.every((t) => t.verdict !== null && t.bundle?.id === 'pskills-base-5m')).toBe(true);
    expect(DEFAULT_BUNDLE_DIR).toMatch(/resources[/\\]bundles[/\\]default$/);
  });
});
