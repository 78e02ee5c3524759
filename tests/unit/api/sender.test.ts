import { describe, expect, it } from 'vitest';
import { checkSender } from '../../../main/electron/sender';

const trusted = { webContentsId: 7, pageUrl: 'file:///app/out/renderer/index.html' };

describe('IPC sender check', () => {
  it('accepts our own window main frame on our page', () => {
    expect(
      checkSender(
        { webContentsId: 7, isMainFrame: true, frameUrl: 'file:///app/out/renderer/index.html#/skills' },
        trusted,
      ),
    ).toBeNull();
  });
  it('refuses other windows, subframes and other pages', () => {
    expect(checkSender({ webContentsId: 8, isMainFrame: true, frameUrl: trusted.pageUrl }, trusted)).toMatch(
      /unknown window/,
    );
    expect(checkSender({ webContentsId: 7, isMainFrame: false, frameUrl: trusted.pageUrl }, trusted)).toMatch(
      /subframe/,
    );
    expect(checkSender({ webContentsId: 7, isMainFrame: true, frameUrl: 'https://evil.example/' }, trusted)).toMatch(
      /unexpected page/,
    );
    expect(checkSender({ webContentsId: 7, isMainFrame: true, frameUrl: 'file:///tmp/other.html' }, trusted)).toMatch(
      /unexpected page/,
    );
    expect(checkSender({ webContentsId: 7, isMainFrame: true, frameUrl: undefined }, trusted)).toMatch(/without a URL/);
  });
});
