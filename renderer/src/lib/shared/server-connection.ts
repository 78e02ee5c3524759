// What the page says when the web host has stopped: not an internal error but a server to start
// again, with the command that brings back this tab's address (README "Quick start").

/** up: answering; stopped: a call found no server; checking: Retry is asking; new_token: a server
 *  answers on this port but with another launch token, so this tab cannot sign in to it. */
export type ServerState = 'up' | 'stopped' | 'checking' | 'new_token';

export interface StoppedNotice {
  title: string;
  /** The commands that start it again, each one that works when pasted into a terminal in the
   *  studio's folder (`npm start`; `npx pskills`, the package's own bin). */
  commands: string[];
  detail: string;
}

/** `port` is this tab's port (location.port): restarting on it keeps the address and, with `--port`,
 *  the token, so Retry reconnects this tab. */
export function stoppedNotice(state: ServerState, port: string): StoppedNotice {
  const p = port || '<port>';
  const commands = [`npm start -- --port ${p}`, `npx pskills serve --port ${p}`];
  if (state === 'new_token')
    return {
      title: 'The studio server is running again, with a new address token.',
      commands,
      detail:
        'Paste the address it printed (studio: http://127.0.0.1:…) into this tab. To keep one address across ' +
        'restarts, start it with --port as above: the same port keeps its token, and Retry reconnects.',
    };
  return {
    title: 'The studio server stopped.',
    commands,
    detail:
      'Start it again in a terminal, in the studio folder, with either command, then press Retry. With --port the ' +
      'address stays the same, so this tab reconnects; your library is kept in its data folder.',
  };
}
