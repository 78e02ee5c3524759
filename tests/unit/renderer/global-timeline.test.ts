import { describe, expect, it } from 'vitest';
import type { AdapterSummary, GlobalVersion } from '../../../common/api/adapter-schemas';
import { shortDate } from '../../../common/adapters/name';
import { formatBeta, timelineRows } from '../../../renderer/src/lib/adapters/global-timeline';

const key = (c: string) => c.repeat(64);
const v = (n: number, adapter: string, extra: Partial<GlobalVersion> = {}): GlobalVersion => ({
  version: n,
  adapter,
  kind: 'ema',
  beta: 0.25,
  rank: 6,
  parentVersion: n > 1 ? n - 1 : null,
  restoresVersion: null,
  createdAt: `2026-12-0${n}T10:00:00.000Z`,
  source: 'manual',
  ...extra,
});
const adapter = (k: string, recipe: AdapterSummary['recipe'], skill: AdapterSummary['skill'] = null) =>
  ({
    id: k.slice(0, 12),
    key: k,
    rank: 4,
    recipe,
    skill,
    createdAt: '2026-12-05T09:00:00.000Z',
  }) as unknown as AdapterSummary;

const lib: AdapterSummary[] = [
  adapter(key('a'), { kind: 'ema', beta: 1, rankBudget: 6, sources: [null, key('1')] }),
  adapter(key('b'), { kind: 'ema', beta: 0.25, rankBudget: 6, sources: [key('a'), key('2')] }),
  adapter(key('1'), { kind: 'import' } as AdapterSummary['recipe'], {
    name: 'review-prs',
    version: 2,
    sha256: key('f'),
  }),
];
const find = (id: string) => lib.find((a) => a.id === id || a.key.startsWith(id));

describe('global adapter timeline rows', () => {
  const versions = [
    v(1, key('a').slice(0, 12), { beta: 1 }),
    v(3, key('a').slice(0, 12), { kind: 'rollback', restoresVersion: 1 }),
    v(2, key('b').slice(0, 12)),
  ];
  const rows = timelineRows(versions, find);

  it('lists newest first and marks only the newest as current', () => {
    expect(rows.map((r) => r.version)).toEqual([3, 2, 1]);
    expect(rows.map((r) => r.current)).toEqual([true, false, false]);
  });

  it("carries each version's origin for its badge, with a tooltip saying what it means", () => {
    const made = timelineRows(
      [v(1, key('a').slice(0, 12), { source: 'lesson' }), v(2, key('b').slice(0, 12), { source: 'run' })],
      find,
    );
    expect(made.map((r) => r.origin)).toEqual(['run', 'lesson']);
    expect(made[0]!.originHelp).toMatch(/adopted continual run/);
    expect(rows.map((r) => r.origin)).toEqual(['manual', 'manual', 'manual']);
  });

  it('names the source: the adapter merged in, its kind and skill, or the version a rollback restored', () => {
    expect(rows[0]!.source).toBe('rollback to v1');
    expect(rows[0]!.sourceId).toBeNull();
    expect(rows[2]!.source).toBe(`merged review-prs@2 · import · ${shortDate('2026-12-05T09:00:00.000Z')}`);
    expect(rows[2]!.sourceId).toBe(key('1').slice(0, 12));
    // The merged adapter is not in the library (deleted): its short key still shows.
    expect(rows[1]!.source).toBe(`merged ${key('2').slice(0, 12)}`);
    expect(rows[1]!.sourceId).toBeNull();
  });

  it('keeps β, rank and time', () => {
    expect(rows[2]).toMatchObject({ beta: 1, rank: 6, createdAt: '2026-12-01T10:00:00.000Z', kind: 'ema' });
  });

  it('shows β as entered, and says the first version is the adapter itself', () => {
    expect(rows.map((r) => r.betaText)).toEqual(['0.25', '0.25', '1 · first']);
    expect(formatBeta(0.1 + 0.2)).toBe('0.3');
    expect(formatBeta(0.1)).toBe('0.1');
  });

  it('offers rollback only for older versions whose adapter differs from the current one', () => {
    expect(rows.map((r) => r.canRollback)).toEqual([false, true, false]);
  });

  it('has no rows and no current for an empty history; an unknown adapter still gets a row', () => {
    expect(timelineRows([], find)).toEqual([]);
    const [only] = timelineRows([v(1, 'cccccccccccc')], () => undefined);
    expect(only).toMatchObject({ current: true, canRollback: false, source: 'first version' });
  });
});
