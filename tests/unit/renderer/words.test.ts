// One vocabulary on screen: every name the API uses for where a skill is, how an adapter was made and
// evolve's edit operators reads as a word, and the pattern the every-page browser test scans rendered
// pages with catches the raw names (tests/e2e/every-page.spec.ts).
import { describe, expect, it } from 'vitest';
import { COMPARE_CONDITIONS } from '../../../common/api/engine-schemas';
import { VERIFY_MODES } from '../../../common/api/verify-schemas';
import { adapterOrigin } from '../../../renderer/src/lib/adapters/adapter-origin';
import { conditionLabel } from '../../../renderer/src/lib/continual/trajectories';
import { conditionWord, INTERNAL_NAMES, kindWord, plainName } from '../../../renderer/src/lib/shared/words';

const WORDS = ['instant', 'distilled', 'in context', 'no skill', 'wrong skill', 'an adapter'];

describe('the words on screen', () => {
  it('every compare condition and verify mode is a word of the vocabulary', () => {
    for (const name of [...COMPARE_CONDITIONS, ...VERIFY_MODES]) {
      const word = conditionWord(name);
      expect(WORDS, name).toContain(word);
      expect(INTERNAL_NAMES.test(word)).toBe(false);
    }
    expect(conditionWord('parametric')).toBe('instant'); // `pskills eval` reports' name for it
  });

  it('adapter kinds read instant, distilled, merged, global, imported', () => {
    expect(['instant', 'distill', 'merge', 'ema', 'import'].map(kindWord)).toEqual([
      'instant',
      'distilled',
      'merged',
      'global',
      'imported',
    ]);
    const base = {
      id: '0123456789ab',
      key: 'a'.repeat(64),
      rank: 4,
      alpha: 8,
      lineage: [],
      bundle: { id: 'b', sha256: 'b'.repeat(64) },
      skill: null,
      bytes: 1,
      tensorsSha256: 'c'.repeat(64),
      createdAt: '2026-01-01T00:00:00Z',
      name: null,
    };
    const ema = { kind: 'ema' as const, beta: 0.5, rankBudget: 8, sources: [null, 'd'.repeat(64)] as [null, string] };
    expect(adapterOrigin({ ...base, recipe: ema }).label).toBe('global');
  });

  it('a trajectory of a comparison names its Distilled column "distilled", never "adapter" or "instant"', () => {
    expect(conditionLabel({ condition: 'adapter', source: 'compare' })).toBe('distilled');
    expect(conditionLabel({ condition: 'instant' })).toBe('instant');
  });

  it('the scan catches raw names and evolve operators, and lets plain words through', () => {
    for (const raw of ['modes in_context, parametric', 'edit move_rule_up', 'wrong_skill', 'drop_last_example_line'])
      expect(INTERNAL_NAMES.test(raw), raw).toBe(true);
    expect(INTERNAL_NAMES.test(plainName('move_rule_up'))).toBe(false);
    expect(INTERNAL_NAMES.test('No skill fails, In context passes, Instant fails, Distilled passes')).toBe(false);
  });
});
