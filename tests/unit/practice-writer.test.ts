// Self-written practice (main/api/services/practice-writer.ts): the endpoint writes when configured;
// one that fails, times out or answers nothing usable falls back to the engine with a warning, and none
// of its replies are kept; the engine failing leaves the other sources with a warning.
import { describe, expect, it } from 'vitest';
import { StudioError } from '../../common/errors';
import { PracticeWriter } from '../../main/api/services/practice-writer';
import type { BundleInfo } from '../../main/engine';

const SKILL = `---
name: ship-notes
description: Write release notes.
---
# Ship notes

## When to use
- writing release notes for a merged change

## Examples
Request: Notes for ticket 4411
Reply: \`api: faster list (4411)\`

## Pitfalls
Never list internal refactors; users cannot see them and the notes get long.
`;
const bundle = {} as BundleInfo;
const signal = new AbortController().signal;
const settings = {
  get: () => ({
    storeTrajectories: false,
    llmBaseUrl: 'http://127.0.0.1:9/v1',
    llmModel: 'm',
    llmApiKey: null,
    executionProvider: 'cpu' as const,
    maxMergeRank: 512,
  }),
};

function engine(replies: string[]) {
  const calls: { system: string; prompts: readonly string[] }[] = [];
  const fn = async (_b: BundleInfo, system: string, prompts: readonly string[]) => {
    calls.push({ system, prompts });
    return prompts.map((_, i) => replies[i] ?? '');
  };
  return { calls, fn };
}

describe('PracticeWriter', () => {
  it('without an endpoint the engine writes; one prompt in general, then one per section but the Examples', async () => {
    const e = engine([
      'Notes for the search fix\nNotes for the search fix',
      'Never list internal refactors; users cannot see them and the notes get long.',
    ]);
    const w = await new PracticeWriter(null, e.fn).write(bundle, SKILL, signal);
    expect(w).toMatchObject({ writer: 'engine', written: ['Notes for the search fix'], warnings: [] });
    expect(w.dropped).toEqual({ empty: 1, duplicate: 1, copy: 1 }); // the third reply is empty
    expect(e.calls[0]!.system).toBe(SKILL);
    expect(e.calls[0]!.prompts).toHaveLength(3);
    expect(e.calls[0]!.prompts[1]).toContain('about "When to use"');
    expect(e.calls[0]!.prompts.join()).not.toContain('Examples');
  });

  it('the endpoint writes when configured, with the skill as its system message', async () => {
    const e = engine(['from the engine']);
    const seen: unknown[] = [];
    const client = () => ({
      url: 'http://127.0.0.1:9/v1/chat/completions',
      complete: async (messages: unknown) => (seen.push(messages), '1. Notes for the login fix\n2. Summarise Friday'),
    });
    const w = await new PracticeWriter(settings, e.fn, client).write(bundle, SKILL, signal);
    expect(w.writer).toBe('endpoint');
    expect(w.written).toEqual(['Notes for the login fix', 'Summarise Friday']);
    expect(e.calls).toHaveLength(0);
    expect(seen[0]).toEqual([
      expect.objectContaining({ role: 'system', content: SKILL }),
      expect.objectContaining({ role: 'user' }),
    ]);
  });

  it('an endpoint that fails midway keeps none of its replies and the engine writes, with a warning', async () => {
    let n = 0;
    const client = () => ({
      url: 'http://127.0.0.1:9/v1/chat/completions',
      complete: async () => {
        if (++n === 2)
          throw new StudioError('internal', 'http://127.0.0.1:9/v1/chat/completions: no answer within 60 s');
        return 'Endpoint request that must not be kept';
      },
    });
    const w = await new PracticeWriter(settings, engine(['Notes for the search fix']).fn, client).write(
      bundle,
      SKILL,
      signal,
    );
    expect(w.writer).toBe('engine');
    expect(w.written).toEqual(['Notes for the search fix']);
    expect(w.warnings.join()).toMatch(/no answer within 60 s; the engine writes instead/);
  });

  it('an endpoint answering garbage falls back too', async () => {
    const client = () => ({ url: 'http://x/v1/chat/completions', complete: async () => '\n\n  \n' });
    const w = await new PracticeWriter(settings, engine(['Notes for the search fix']).fn, client).write(
      bundle,
      SKILL,
      signal,
    );
    expect(w.writer).toBe('engine');
    expect(w.warnings.join()).toMatch(/no usable request/);
  });

  it('the engine failing leaves no self-written requests and a warning', async () => {
    const fail = async () => {
      throw new Error('out of memory');
    };
    const w = await new PracticeWriter(null, fail).write(bundle, SKILL, signal);
    expect(w).toMatchObject({ writer: null, written: [] });
    expect(w.warnings.join()).toMatch(/out of memory; practising on the other sources/);
  });
});
