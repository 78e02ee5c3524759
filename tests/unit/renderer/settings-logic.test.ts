// The Settings page's route and palette entry (pure: renderer/src/lib/shared/routes.ts, palette-commands.ts).
import { describe, expect, it } from 'vitest';
import { paletteCommands, type PaletteHost } from '../../../renderer/src/lib/shared/palette-commands';
import { filterCommands } from '../../../renderer/src/lib/shared/palette';
import { formatRoute, parseRoute, type Route } from '../../../renderer/src/lib/shared/routes';

describe('Settings page route and palette', () => {
  it('#/settings round-trips', () => {
    expect(parseRoute('#/settings')).toEqual({ page: 'settings' });
    expect(formatRoute({ page: 'settings' })).toBe('#/settings');
  });

  it('the palette finds Settings by what it holds and goes there', () => {
    const went: Route[] = [];
    const host: PaletteHost = {
      route: { page: 'library' },
      skills: [],
      themeChoice: 'system',
      go: (r) => went.push(r),
      openImport: () => {},
      openNewSkill: () => {},
      compile: () => {},
      distil: () => {},
      compare: () => {},
      tryExample: () => {},
      exportAdapter: () => {},
      setTheme: () => {},
      showShortcuts: () => {},
    };
    const found = filterCommands(paletteCommands(host), 'api key');
    expect(found[0]?.id).toBe('go:settings');
    found[0]!.run();
    expect(went).toEqual([{ page: 'settings' }]);
  });
});
