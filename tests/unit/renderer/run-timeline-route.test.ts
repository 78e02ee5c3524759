// The Continual page's link to a run's own global timeline: a route of its own, read back as written.
import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute } from '../../../renderer/src/lib/shared/routes';

describe('the run timeline route', () => {
  it('round-trips a run id, and the Library timeline stays as it was', () => {
    const route = { page: 'adapters' as const, id: null, tab: 'global' as const, run: '0123456789ab' };
    expect(formatRoute(route)).toBe('#/adapters/global/run/0123456789ab');
    expect(parseRoute('#/adapters/global/run/0123456789ab')).toEqual(route);
    expect(parseRoute('#/adapters/global')).toEqual({ page: 'adapters', id: null, tab: 'global' });
  });

  it('a malformed run id opens the Library timeline', () => {
    expect(parseRoute('#/adapters/global/run/../x')).toEqual({ page: 'adapters', id: null, tab: 'global' });
  });
});
