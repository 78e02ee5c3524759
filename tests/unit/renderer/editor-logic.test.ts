// The skill editor's pure parts: hash routes (diff included), the guard's "does this route keep the
// editor" rule, the diff's default pair and line counts, and the draft store that keeps unsaved text.
import { describe, expect, it } from 'vitest';
import { describeStats, lineChangeStats } from '../../../renderer/src/lib/skills/diff-stats';
import { DRAFT_PREFIX, DraftStore, type KeyValueStore } from '../../../renderer/src/lib/shared/drafts';
import { diffPair, formatRoute, keepsEditor, parseRoute, type Route } from '../../../renderer/src/lib/shared/routes';

class MapStore implements KeyValueStore {
  readonly map = new Map<string, string>();
  full = false;
  getItem(k: string): string | null {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    if (this.full) throw new Error('QuotaExceededError');
    this.map.set(k, v);
  }
  removeItem(k: string): void {
    this.map.delete(k);
  }
}

describe('routes', () => {
  const cases: Array<[string, Route]> = [
    ['#/library', { page: 'library' }],
    ['#/playground', { page: 'playground' }],
    ['#/adapters/abc123', { page: 'adapters', id: 'abc123' }],
    ['#/skill/pdf', { page: 'skill', name: 'pdf', version: null, view: 'read' }],
    ['#/skill/pdf/v/2', { page: 'skill', name: 'pdf', version: 2, view: 'read' }],
    ['#/skill/pdf/v/2/edit', { page: 'skill', name: 'pdf', version: 2, view: 'edit' }],
    ['#/skill/sw%2Fhandoff/compare', { page: 'skill', name: 'sw/handoff', version: null, view: 'compare' }],
    ['#/skill/pdf/diff', { page: 'skill', name: 'pdf', version: null, view: 'diff', base: null }],
    ['#/skill/pdf/diff/1/3', { page: 'skill', name: 'pdf', version: 3, view: 'diff', base: 1 }],
    ['#/skill/pdf/diff/auto/3', { page: 'skill', name: 'pdf', version: 3, view: 'diff', base: null }],
    ['#/skill/pdf/diff/2/latest', { page: 'skill', name: 'pdf', version: null, view: 'diff', base: 2 }],
  ];

  it.each(cases)('%s parses and formats back', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
    expect(formatRoute(route)).toBe(hash);
  });

  it('reads junk as the nearest page', () => {
    expect(parseRoute('')).toEqual({ page: 'library' });
    expect(parseRoute('#/skill/pdf/v/0')).toEqual({ page: 'skill', name: 'pdf', version: null, view: 'read' });
    expect(parseRoute('#/skill/pdf/diff/x/y')).toEqual({
      page: 'skill',
      name: 'pdf',
      version: null,
      view: 'diff',
      base: null,
    });
  });

  it('only the same skill in Edit keeps the editor (every other navigation is guarded)', () => {
    expect(keepsEditor({ page: 'skill', name: 'pdf', version: null, view: 'edit' }, 'pdf')).toBe(true);
    expect(keepsEditor({ page: 'skill', name: 'pdf', version: 3, view: 'edit' }, 'pdf')).toBe(true);
    expect(keepsEditor({ page: 'skill', name: 'pdf', version: null, view: 'read' }, 'pdf')).toBe(false);
    expect(keepsEditor({ page: 'skill', name: 'pdf', version: null, view: 'diff' }, 'pdf')).toBe(false);
    expect(keepsEditor({ page: 'skill', name: 'other', version: null, view: 'edit' }, 'pdf')).toBe(false);
    expect(keepsEditor({ page: 'library' }, 'pdf')).toBe(false);
    expect(keepsEditor({ page: 'adapters', id: null }, 'pdf')).toBe(false);
  });
});

describe('diffPair', () => {
  it('defaults to the latest version against the one before it', () => {
    expect(diffPair([3, 1, 2], null, null)).toEqual({ from: 2, to: 3 });
    expect(diffPair([1, 2, 3], null, 2)).toEqual({ from: 1, to: 2 });
  });
  it('takes any two versions, in either order', () => {
    expect(diffPair([1, 2, 3], 3, 1)).toEqual({ from: 3, to: 1 });
    expect(diffPair([1, 2, 3], 1, 3)).toEqual({ from: 1, to: 3 });
  });
  it('falls back on versions that do not exist, and a single version against itself', () => {
    expect(diffPair([1, 2], 9, 7)).toEqual({ from: 1, to: 2 });
    expect(diffPair([1], null, null)).toEqual({ from: 1, to: 1 });
    expect(diffPair([], null, null)).toBeNull();
  });
});

describe('lineChangeStats', () => {
  it('counts hunks and added and removed lines (end 0 = nothing on that side)', () => {
    const s = lineChangeStats([
      { originalStartLineNumber: 3, originalEndLineNumber: 4, modifiedStartLineNumber: 3, modifiedEndLineNumber: 5 },
      { originalStartLineNumber: 9, originalEndLineNumber: 0, modifiedStartLineNumber: 11, modifiedEndLineNumber: 11 },
      { originalStartLineNumber: 12, originalEndLineNumber: 12, modifiedStartLineNumber: 13, modifiedEndLineNumber: 0 },
    ]);
    expect(s).toEqual({ changes: 3, added: 4, removed: 3 });
    expect(describeStats(s)).toBe('3 changes: +4 −3 lines');
    expect(describeStats(lineChangeStats([]))).toBe('No differences');
  });
});

describe('DraftStore', () => {
  const base = { version: 2, sha256: 'a'.repeat(64) };
  const at = new Date('2026-03-01T12:00:00Z');

  it('keeps, returns and removes a draft per skill', () => {
    const store = new MapStore();
    const drafts = new DraftStore(store, () => at);
    expect(drafts.get('pdf')).toBeNull();
    expect(drafts.put('pdf', 'new text', base)).toBe(true);
    expect(drafts.get('pdf')).toEqual({
      name: 'pdf',
      content: 'new text',
      baseVersion: 2,
      baseSha256: base.sha256,
      savedAt: at.toISOString(),
    });
    expect(drafts.get('other')).toBeNull();
    drafts.remove('pdf');
    expect(drafts.get('pdf')).toBeNull();
    expect(store.map.size).toBe(0);
  });

  it('ignores entries it cannot read, or filed under another name', () => {
    const store = new MapStore();
    const drafts = new DraftStore(store);
    store.setItem(`${DRAFT_PREFIX}pdf`, '{not json');
    expect(drafts.get('pdf')).toBeNull();
    store.setItem(`${DRAFT_PREFIX}pdf`, JSON.stringify({ name: 'pdf', content: 1 }));
    expect(drafts.get('pdf')).toBeNull();
    store.setItem(
      `${DRAFT_PREFIX}pdf`,
      JSON.stringify({ name: 'x', content: 'a', baseVersion: 1, baseSha256: 's', savedAt: 't' }),
    );
    expect(drafts.get('pdf')).toBeNull();
  });

  it('reports a full or missing storage instead of throwing', () => {
    const store = new MapStore();
    store.full = true;
    expect(new DraftStore(store).put('pdf', 'x', base)).toBe(false);
    const none = new DraftStore(null);
    expect(none.put('pdf', 'x', base)).toBe(false);
    expect(none.get('pdf')).toBeNull();
    expect(() => none.remove('pdf')).not.toThrow();
  });
});
