// A stopped web host is a server to start again, not a bug: the banner's words and the error hint
// name the stopped server and the command that brings this tab's address back.
import { describe, expect, it } from 'vitest';
import { friendlyError } from '../../../renderer/src/lib/shared/errors';
import { stoppedNotice } from '../../../renderer/src/lib/shared/server-connection';

describe('the stopped-server notice', () => {
  it('says the server stopped and gives the restart command with this tab’s port', () => {
    const n = stoppedNotice('stopped', '41234');
    expect(n.title).toBe('The studio server stopped.');
    // Both work when pasted in the studio folder after `npm ci`: npm's start script, and npx running
    // the package's own bin (a bare `pskills` is not on PATH).
    expect(n.commands).toEqual(['npm start -- --port 41234', 'npx pskills serve --port 41234']);
    expect(n.detail).toMatch(/Retry/);
    expect(`${n.title} ${n.detail}`).not.toMatch(/bug|internal/i);
  });

  it('a server back with another token asks for its new address', () => {
    const n = stoppedNotice('new_token', '41234');
    expect(n.title).toMatch(/running again, with a new address token/);
    expect(n.detail).toMatch(/Paste the address it printed/);
  });

  it('an error of code unavailable reads as a stopped server with the restart hint', () => {
    const f = friendlyError({ code: 'unavailable', message: 'the studio server stopped or cannot be reached' });
    expect(f.summary).toBe('The studio server stopped.');
    expect(f.hint).toMatch(/npx pskills serve --port/);
    expect(f.hint).not.toMatch(/bug report/);
  });
});
