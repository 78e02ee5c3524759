// Whether the web host still answers this tab. A call or stream that finds it gone marks it stopped
// (bridge.ts); Retry asks the host again and clears the mark once it answers.
import { toUiError } from './errors';
import type { ServerState } from './server-connection';

export class ServerConnection {
  state = $state<ServerState>('up');

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly subscribe: (listener: () => void) => () => void,
    /** Called once the host answers again, to reload what the page shows. */
    private readonly onBack: () => void = () => {},
  ) {}

  start(): () => void {
    return this.subscribe(() => {
      if (this.state !== 'checking') this.state = 'stopped';
    });
  }

  async retry(): Promise<void> {
    if (this.state === 'checking') return;
    this.state = 'checking';
    try {
      await this.ping();
      this.state = 'up';
      this.onBack();
    } catch (err) {
      this.state = toUiError(err).code === 'unauthorized' ? 'new_token' : 'stopped';
    }
  }
}
