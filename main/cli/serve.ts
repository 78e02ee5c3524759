// `pskills serve`: the studio's UI and API on 127.0.0.1 behind a per-launch token, until Ctrl-C or
// SIGTERM.
import { startWebHost } from '../api/transports/web-host';
import { RENDERER_DIR } from '../paths';
import { stableToken } from '../api/transports/serve-token';
import type { Command } from './command';
import { usageError } from './usage';

const untilStopped = () =>
  new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

export const serveCommand: Command = {
  name: 'serve',
  usage: '[--port P]',
  summary: 'run the studio on 127.0.0.1 and print its address (with the token); --port P keeps that address',
  async run(argv, { io, flags, openStudio, dataDir }) {
    const { values, positionals } = flags.parse(argv, { port: { type: 'string', default: '0' } });
    if (positionals.length) throw usageError(serveCommand);
    const port = flags.integer(values.port, '--port', { min: 0, max: 65535 });
    const { studio } = openStudio(values);
    try {
      const token = stableToken(dataDir(values), port);
      const host = await startWebHost({
        dispatcher: studio.dispatcher,
        staticDir: RENDERER_DIR,
        port,
        routes: studio.routes,
        ...(token ? { token } : {}),
      });
      io.out(values.json ? JSON.stringify({ url: host.url, port: host.port }) : `studio: ${host.url}`);
      await untilStopped();
      await host.close();
    } finally {
      await studio.dispose();
    }
    return 0;
  },
};
