// The Trajectories page's pure parts: routes, filters → requests, the suggested export file, labels.
import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute } from '../../../renderer/src/lib/shared/routes';
import {
  conditionLabel,
  exportInput,
  listInput,
  PAGE_SIZE,
  skillFilter,
  skillLabel,
  sourceLabel,
  suggestedExportFile,
  verdictLabel,
} from '../../../renderer/src/lib/continual/trajectories';

describe('trajectories routes', () => {
  it('round-trips the page and an opened trajectory; a malformed id opens the list', () => {
    expect(parseRoute('#/trajectories')).toEqual({ page: 'trajectories', id: null });
    expect(parseRoute('#/trajectories/ab12cd34')).toEqual({ page: 'trajectories', id: 'ab12cd34' });
    expect(parseRoute('#/trajectories/NOT-HEX')).toEqual({ page: 'trajectories', id: null });
    expect(formatRoute({ page: 'trajectories', id: 'ab12cd34' })).toBe('#/trajectories/ab12cd34');
    expect(formatRoute({ page: 'trajectories', id: null })).toBe('#/trajectories');
  });
});

describe('trajectory filters', () => {
  it('reads a skill as name or name@n', () => {
    expect(skillFilter('')).toEqual({});
    expect(skillFilter('  tar-archives ')).toEqual({ skill: 'tar-archives' });
    expect(skillFilter('tar-archives@3')).toEqual({ skill: 'tar-archives', version: 3 });
    expect(skillFilter('odd@0')).toEqual({ skill: 'odd@0' });
  });

  it('builds the list and export requests from the same filters', () => {
    const f = { skill: 'pdf@2', rating: 'up' as const };
    expect(listInput(f)).toEqual({ skill: 'pdf', version: 2, rating: 'up', limit: PAGE_SIZE, offset: 0 });
    expect(exportInput(f, '/d/t.jsonl')).toEqual({ skill: 'pdf', version: 2, rating: 'up', file: '/d/t.jsonl' });
    expect(listInput({ skill: '', rating: '' }, 50)).toEqual({ limit: PAGE_SIZE, offset: 50 });
  });

  it('suggests a file in the data folder with its separator', () => {
    expect(suggestedExportFile('/home/me/.config/Studio/')).toBe('/home/me/.config/Studio/trajectories.jsonl');
    expect(suggestedExportFile('C:\\Users\\me\\Studio')).toBe('C:\\Users\\me\\Studio\\trajectories.jsonl');
  });

  it('labels verdicts and skills', () => {
    expect(verdictLabel({ verdict: null })).toBe('');
    expect(verdictLabel({ verdict: { passed: false } })).toBe('fails');
    expect(verdictLabel({ verdict: { passed: true } })).toBe('passes');
    expect(skillLabel({ skill: null })).toBe('—');
    expect(skillLabel({ skill: { name: 'pdf', version: 2, sha256: 'a'.repeat(64), linked: true } })).toBe('pdf@2');
  });

  it("names the condition with the source, in Compare's words, so one comparison's four rows differ", () => {
    const labels = (['none', 'in_context', 'instant', 'wrong_skill'] as const).map((condition) =>
      sourceLabel({ source: 'compare', condition }),
    );
    expect(labels).toEqual([
      'compare · no skill',
      'compare · in context',
      'compare · instant',
      'compare · wrong skill',
    ]);
    expect(sourceLabel({ source: 'compare', condition: 'adapter' })).toBe('compare · distilled');
    expect(sourceLabel({ source: 'playground', condition: 'adapter' })).toBe('playground · an adapter');
    expect(sourceLabel({ source: 'openai', condition: null })).toBe('openai');
    expect(conditionLabel({ condition: 'wrong_skill' })).toBe('wrong skill');
    expect(conditionLabel({ condition: null })).toBe('');
  });
});
