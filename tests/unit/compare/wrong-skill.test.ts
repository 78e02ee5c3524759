// The wrong-skill rule of compare: another package, the least similar quarter, drawn by the name.
import { describe, expect, it } from 'vitest';
import { jaccard, pickWrongSkill, skillWords, type SkillRef } from '../../../common/compare/wrong-skill';

const skill = (name: string, description: string, pkg: string | null = null): SkillRef => ({
  name,
  description,
  package: pkg,
});

describe('pickWrongSkill', () => {
  it('word Jaccard of name and description', () => {
    expect([...skillWords(skill('sql-review', 'Review SQL migrations, do it'))].sort()).toEqual([
      'migrations',
      'review',
      'sql',
    ]);
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3);
    expect(jaccard(new Set(), new Set())).toBe(0);
  });

  it('takes a skill of another package, never the list neighbour by default', () => {
    const lib = [
      skill('api-auth', 'Add authentication to an API endpoint', 'p1'),
      skill('api-docs', 'Write API endpoint documentation', 'p1'),
      skill('api-tests', 'Write API endpoint tests', 'p1'),
      skill('bake-bread', 'Bake sourdough bread at home', 'p2'),
    ];
    for (const s of lib.slice(0, 3)) expect(pickWrongSkill(s, lib)).toBe('bake-bread'); // the only one elsewhere
    expect(pickWrongSkill(lib[3]!, lib)).toMatch(/^api-/);
  });

  it('without packages: the least similar quarter, drawn deterministically by the target name', () => {
    const names = [
      'review-sql',
      'review-golang',
      'review-java',
      'review-python',
      'review-ruby',
      'review-rust',
      'review-swift',
      'review-zig',
    ];
    const lib = [
      ...names.map((n) => skill(n, `Review ${n.slice(7)} code for bugs`)),
      skill('garden-roses', 'Prune roses in spring'),
    ];
    const target = lib[0]!;
    // 8 candidates, a quarter is 2: garden-roses (shares no word) and, of the reviews that tie at 3/5, the first by name
    const pick = pickWrongSkill(target, lib);
    expect(['garden-roses', 'review-golang']).toContain(pick);
    expect(pickWrongSkill(target, [...lib].reverse())).toBe(pick); // list order does not matter
    expect(pick).toBe(pickWrongSkill(target, lib)); // deterministic
    // targets draw from their own least similar quarter, not all the same skill
    const drawn = new Set(lib.map((t) => pickWrongSkill(t, lib)));
    expect(drawn.size).toBeGreaterThan(1);
    expect(pickWrongSkill(lib[8]!, lib)).toMatch(/^review-/);
  });

  it('a library of one has no wrong skill; same-package only falls back to all others', () => {
    expect(pickWrongSkill(skill('a', 'x'), [skill('a', 'x')])).toBeNull();
    expect(pickWrongSkill(skill('a', 'alpha', 'p'), [skill('a', 'alpha', 'p'), skill('b', 'beta', 'p')])).toBe('b');
  });
});
