// The Playground's pure parts: the adapter picker's options and values, and multi-turn chat history.
import { describe, expect, it } from 'vitest';
import { shortDate } from '../../../common/adapters/name';
import type { AdapterSummary, GlobalVersion } from '../../../common/api/adapter-schemas';
import { GenerateInput } from '../../../common/api/engine-schemas';
import type { SkillSummary } from '../../../common/api/skill-schemas';
import {
  adapterOptions,
  adapterOrigin,
  choiceLabel,
  choiceOf,
  choiceValue,
  skillVersions,
} from '../../../renderer/src/lib/adapters/adapter-choice';
import { chatMessages, settledTurns } from '../../../renderer/src/lib/playground/chat';

const sha = (c: string) => c.repeat(64);
const skill = (name: string, latestVersion = 1): SkillSummary => ({
  name,
  description: '',
  package: null,
  versions: latestVersion,
  latestVersion,
  updatedAt: '2026-01-01T00:00:00Z',
});
const adapter = (id: string, bundle: string, over: Partial<AdapterSummary> = {}): AdapterSummary => ({
  name: null,
  id,
  key: id.padEnd(64, '0'),
  rank: 4,
  alpha: 4,
  recipe: { kind: 'instant', hypernet: 'perceiver', combine: 'mean' },
  lineage: [],
  bundle: { id: bundle, sha256: sha('d') },
  skill: { name: 'pdf', version: 2, sha256: sha('e') },
  bytes: 1,
  tensorsSha256: sha('f'),
  createdAt: '2026-01-01T00:00:00Z',
  ...over,
});
const global: GlobalVersion = {
  version: 3,
  adapter: 'aaaaaaaaaaaa',
  kind: 'ema',
  beta: 0.1,
  rank: 16,
  parentVersion: 2,
  restoresVersion: null,
  createdAt: '2026-01-01T00:00:00Z',
  source: 'manual',
};

describe('adapter picker', () => {
  it('writes every choice as one <select> value and reads it back', () => {
    const choices = [
      null,
      { kind: 'global' as const },
      { kind: 'skill' as const, name: 'sw/handoff' },
      { kind: 'library' as const, id: 'abcdef012345' },
    ];
    for (const c of choices) expect(choiceOf(choiceValue(c))).toEqual(c);
    expect(choiceOf('skill:pdf', 2)).toEqual({ kind: 'skill', name: 'pdf', version: 2 });
    // Every choice it makes passes the contract's schema.
    for (const c of [...choices.filter((c) => c !== null), { kind: 'skill' as const, name: 'pdf', version: 2 }]) {
      expect(GenerateInput.safeParse({ prompt: 'x', adapter: c }).success).toBe(true);
    }
  });

  it('offers the global adapter only when the bundle has one, and skills only with a hypernetwork', () => {
    const base = { adapters: [], skills: [skill('pdf', 3)], bundleId: 'default' };
    const none = adapterOptions({ ...base, hasHypernet: false, global: null });
    expect(none.global).toMatchObject({ disabled: true, label: 'Global adapter (none yet)' });
    expect(none.skills).toEqual([expect.objectContaining({ value: 'skill:pdf', disabled: true })]);
    const some = adapterOptions({ ...base, hasHypernet: true, global });
    expect(some.global).toMatchObject({ disabled: false, label: 'Global adapter (v3, rank 16)' });
    expect(some.skills[0]!.disabled).toBe(false);
    expect(some.none).toMatchObject({ value: '', disabled: false });
  });

  it('lists every library adapter by what it was made from; those of another bundle are disabled', () => {
    const opts = adapterOptions({
      adapters: [
        adapter('aaaaaaaaaaaa', 'default'),
        adapter('bbbbbbbbbbbb', 'other'),
        adapter('cccccccccccc', 'default', {
          skill: null,
          recipe: { kind: 'merge', method: 'svd', weights: [1, 1], rank: 4, sources: [sha('1'), sha('2')] },
        }),
      ],
      skills: [],
      bundleId: 'default',
      hasHypernet: true,
      global: null,
    });
    const day = shortDate('2026-01-01T00:00:00Z'); // "1 Jan" in 2026, with its year after
    expect(opts.library.map((o) => [o.label, o.disabled])).toEqual([
      [`pdf@2 · instant · ${day} · rank 4 · aaaaaaaaaaaa`, false],
      [`pdf@2 · instant · ${day} · rank 4 · bbbbbbbbbbbb (bundle other)`, true],
      [`svd merge of 2 · ${day} · rank 4 · cccccccccccc`, false],
    ]);
    expect(adapterOrigin(adapter('x', 'b', { skill: null, recipe: { kind: 'import', tensorsSha256: sha('1') } }))).toBe(
      'imported',
    );
  });

  it('labels the choice and lists a skill’s versions newest first', () => {
    expect(choiceLabel(null)).toBe('base model');
    expect(choiceLabel({ kind: 'skill', name: 'pdf' })).toBe('pdf@latest');
    expect(choiceLabel({ kind: 'skill', name: 'pdf', version: 2 })).toBe('pdf@2');
    expect(choiceLabel({ kind: 'library', id: 'abcdef' })).toBe('adapter abcdef');
    expect(skillVersions(skill('pdf', 3))).toEqual([3, 2, 1]);
    expect(skillVersions(undefined)).toEqual([]);
  });
});

describe('multi-turn chat', () => {
  const turns = [
    { role: 'user' as const, content: 'Hi' },
    { role: 'assistant' as const, content: 'Hello.' },
  ];

  it('a reply that ended (or was stopped) becomes history; a failed or running one does not', () => {
    expect(settledTurns(turns, { user: 'Next?' }, 'done', 'Sure.')).toEqual([
      ...turns,
      { role: 'user', content: 'Next?' },
      { role: 'assistant', content: 'Sure.' },
    ]);
    expect(settledTurns(turns, { user: 'Next?' }, 'cancelled', 'Su')).toHaveLength(4);
    expect(settledTurns(turns, { user: 'Next?' }, 'failed', '')).toEqual(turns);
    expect(settledTurns(turns, { user: 'Next?' }, 'running', 'S')).toEqual(turns);
    expect(settledTurns(turns, null, 'done', 'raw output')).toEqual(turns);
  });

  it('sends the system message (when written), the history, then the new message', () => {
    expect(chatMessages('Be brief.', turns, 'More?')).toEqual([
      { role: 'system', content: 'Be brief.' },
      ...turns,
      { role: 'user', content: 'More?' },
    ]);
    expect(chatMessages('  ', [], 'One')).toEqual([{ role: 'user', content: 'One' }]);
  });
});
