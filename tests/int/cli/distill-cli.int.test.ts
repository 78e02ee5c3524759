// `pskills compile --distill` as a user runs it: a child process on the tiny bundle with a train-step
// graph (tests/fixtures/bundle-tiny-train), JSON on stdout with nothing of the progress bar, a stored
// adapter of kind distilled, compared in the Distilled column; a bundle without the graph says so.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ROOT } from '../../../main/paths';
import { TINY_BUNDLE } from '../compile/fixture';

const BIN = join(process.cwd(), 'bin', 'pskills.mjs');
const TRAIN_BUNDLE = join(APP_ROOT, 'tests/fixtures/bundle-tiny-train');
const SKILL = `---
name: greet
description: Answer a greeting with the word tests.
---
# Greet

## Examples
- User: hi
- User: yo
- User: ok
`;
let dataDir: string;
let src: string;

const pskills = (args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pskills-distill-cli-'));
  src = mkdtempSync(join(tmpdir(), 'pskills-distill-cli-src-'));
  mkdirSync(join(src, 'greet'));
  writeFileSync(join(src, 'greet', 'SKILL.md'), SKILL);
  expect(pskills(['import', src, '--json']).code).toBe(0);
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(src, { recursive: true, force: true });
});

describe('pskills compile --distill', () => {
  it('--json prints the distilled adapter and no progress; the library lists it with its recipe', () => {
    const r = pskills(['compile', 'greet', '--bundle', TRAIN_BUNDLE, '--distill', '--steps', '3', '--json']);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { adapter: string; kind: string; steps: number; final_loss: number };
    expect(out).toMatchObject({ kind: 'distilled', steps: 3 });
    expect(out.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(Number.isFinite(out.final_loss)).toBe(true);
    expect(r.err).not.toMatch(/step \d+\/3/);
    const list = pskills(['adapters', 'list', '--json']);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toContain('"kind":"distill"');
  });

  it('compare --conditions takes distilled, and its --json lists that column like the others', () => {
    const r = pskills([
      'compare',
      'greet',
      '--bundle',
      TRAIN_BUNDLE,
      '--prompt',
      'hi',
      '--max-tokens',
      '3',
      '--conditions',
      'none,distilled',
      '--json',
    ]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as {
      columns: { condition: string; adapter: string | null; prompt_tokens: number }[];
    };
    expect(out.columns.map((c) => c.condition)).toEqual(['none', 'distilled']);
    const [none, distilled] = out.columns;
    expect(none!.adapter).toBeNull();
    expect(distilled!.adapter).toMatch(/^[0-9a-f]{12}$/);
    expect(distilled!.prompt_tokens).toBe(none!.prompt_tokens);
    expect(Object.keys(distilled!).sort()).toEqual(Object.keys(none!).sort());
    const bad = pskills(['compare', 'greet', '--prompt', 'hi', '--conditions', 'distiled']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/"distiled" is not one of none, in_context, instant, distilled, wrong_skill/);
  });

  it('a bundle without train_step is refused with the reason', () => {
    const r = pskills(['compile', 'greet', '--bundle', TINY_BUNDLE, '--distill', '--json']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/no train-step graph.*Instant only/);
  });
});
