import { describe, expect, it } from 'vitest';
import { StopStrings, tokenStop } from '../../../main/engine/stopping';

describe('StopStrings', () => {
  it('holds back a possible start of a stop string and cuts before it', () => {
    const s = new StopStrings(['</done>']);
    expect(s.push('abc <')).toEqual({ text: 'abc ', stopped: false });
    expect(s.push('/do')).toEqual({ text: '', stopped: false });
    expect(s.push('ne> tail')).toEqual({ text: '', stopped: true });
  });

  it('releases held text once it cannot become a stop string', () => {
    const s = new StopStrings(['END']);
    expect(s.push('xE')).toEqual({ text: 'x', stopped: false });
    expect(s.push('Nx')).toEqual({ text: 'ENx', stopped: false });
    expect(s.push('EN')).toEqual({ text: '', stopped: false });
    expect(s.flush()).toBe('EN');
  });

  it('stops at the earliest of several strings', () => {
    expect(new StopStrings(['bb', 'a']).push('xxbbya')).toEqual({ text: 'xx', stopped: true });
  });

  it('with no stop strings passes everything through', () => {
    expect(new StopStrings([]).push('anything')).toEqual({ text: 'anything', stopped: false });
    expect(() => new StopStrings([''])).toThrow('stop strings must not be empty');
  });
});

describe('tokenStop', () => {
  const limits = { stopTokenIds: new Set([3]), maxNewTokens: 4, maxPositions: 10 };
  it('stop tokens, then the token budget, then the context', () => {
    expect(tokenStop(limits, 3, 1, 5)).toBe('eos');
    expect(tokenStop(limits, 7, 4, 5)).toBe('length');
    expect(tokenStop(limits, 7, 2, 10)).toBe('length');
    expect(tokenStop(limits, 7, 2, 9)).toBeNull();
  });
});
