// Every contract method is reached from the studio's UI, or is named below with the reason it is not.
// A method added to the contract without renderer code fails here until it gets a UI or a reason.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { studioContract } from '../../../common/api/contract';

// By design outside the UI: the CLI, the OpenAI endpoint or tests use them.
const CLI_ONLY: Record<string, string> = {
  'adapters.compare': 'deprecated one-shot compare kept for old CLI scripts; the UI streams compare.run',
  'trajectories.add': 'written by the services that record (compare, playground, OpenAI endpoint), not by hand',
  'trajectories.import': 'pskills trajectories import: JSONL from another machine',
};

// Not in the studio yet (this list should end empty).
const NOT_YET_IN_STUDIO: Record<string, string> = {};

function rendererText(dir: string): string {
  let out = '';
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out += rendererText(path);
    else if (/\.(ts|svelte)$/.test(name)) out += readFileSync(path, 'utf8') + '\n';
  }
  return out;
}

describe('contract methods the renderer calls', () => {
  const text = rendererText(join(process.cwd(), 'renderer/src'));
  const methods = Object.entries(studioContract).flatMap(([ns, group]) =>
    Object.keys(group as object).map((m) => `${ns}.${m}`),
  );
  const called = (m: string) => new RegExp(`\\.${m.replace('.', '\\.')}\\b`).test(text);

  it('every method is called from renderer code or named with a reason', () => {
    const exempt = { ...CLI_ONLY, ...NOT_YET_IN_STUDIO };
    expect(methods.filter((m) => !called(m) && !(m in exempt))).toEqual([]);
  });

  it('the lists name real methods that the renderer indeed does not call', () => {
    for (const m of [...Object.keys(CLI_ONLY), ...Object.keys(NOT_YET_IN_STUDIO)]) {
      expect(methods, m).toContain(m);
      expect(called(m), `${m} is called now: take it off the list`).toBe(false);
    }
  });
});
