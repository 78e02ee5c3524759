// What the page says when the web host has stopped: not an internal error but a server to start
// again, with the command that brings back this tab's address (README "Quick start").

/** up: answering; stopped: a call found no server; checking: Retry is asking; new_token: a server
 *  answers on this port but with another launch token, so this tab cannot sign in to it. */
export type ServerState = 'up' | 'stopped' | 'checking' | 'new_token';

export interface StoppedNotice {
  title: string;
  /** The command to type in a terminal. */
  command: string;
  detail: string;
}

/** `port` is this tab's port (location.port): restarting on it keeps the address and, with `--port`,
 *  the token, so Retry reconnects this tab. */
export function stoppedNotice(state: ServerState, port: string): StoppedNotice {
  const command = `pskills serve --port ${port || '<port>'}`;
  if (state === 'new_token')
    return {
      title: 'The studio server is running again, with a new address token.',
      command,
      detail:
        'Open the address it printed (studio: http://127.0.0.1:…). To keep one address across restarts, ' +
        'start it with --port: the same port keeps its token, and an open tab reconnects with Retry.',
    };
  return {
    title: 'The studio server stopped.',
    command,
    detail:
      'Start it again in a terminal with this command (npm start -- --port works too), then press Retry. ' +
      'With --port the address stays the same, so this tab reconnects; your library is kept in its data folder.',
  };
}
