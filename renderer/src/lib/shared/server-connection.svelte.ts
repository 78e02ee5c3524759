// Whether the web host still answers this tab. A call or stream that finds it gone marks it stopped
// (bridge.ts), and so does the heartbeat, which asks every second while the page is shown, so an idle
// page says so too. Retry, or the host's new address pasted into the tab, asks the host again; once it
// answers, `generation` moves on: the page is drawn afresh and every part of it loads again, with
// none of the errors from while it was gone.
import { toUiError } from './errors';
import type { ServerState } from './server-connection';

/** How often an idle page asks whether the host is there (the banner shows within 3 s of it going). */
export const HEARTBEAT_MS = 1000;

export class ServerConnection {
  state = $state<ServerState>('up');
  /** Counts the reconnections: the page is keyed on it. */
  generation = $state(0);
  private beating = false;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly subscribe: (listener: () => void) => () => void,
    /** Called once the host answers again, to reload what the page shows. */
    private readonly onBack: () => void = () => {},
    /** A launch address pasted into the tab (bridge.ts onNewToken); absent in Electron. */
    private readonly onNewToken: ((listener: () => void) => () => void) | null = null,
    /** Ask the host every HEARTBEAT_MS while up (the web host; Electron's main process cannot stop alone). */
    private readonly heartbeat = false,
  ) {}

  start(): () => void {
    const stops = [
      this.subscribe(() => {
        if (this.state !== 'checking') this.state = 'stopped';
      }),
    ];
    if (this.onNewToken) stops.push(this.onNewToken(() => void this.retry(true)));
    if (this.heartbeat) {
      const timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
      stops.push(() => clearInterval(timer));
    }
    return () => stops.forEach((stop) => stop());
  }

  private async beat(): Promise<void> {
    if (this.state !== 'up' || this.beating || document.hidden) return;
    this.beating = true;
    try {
      await this.ping();
    } catch (err) {
      // A host gone is reported by the bridge itself (state 'stopped'); another token here means a
      // new host on this port.
      if (toUiError(err).code === 'unauthorized' && this.state === 'up') this.state = 'new_token';
    } finally {
      this.beating = false;
    }
  }

  /** Asks the host; once it answers after being gone (or `fresh`: a new address was pasted, whose
   *  errors from the old token may be on screen), the page loads again. */
  async retry(fresh = false): Promise<void> {
    if (this.state === 'checking') return;
    const was = this.state;
    this.state = 'checking';
    try {
      await this.ping();
      this.state = 'up';
      if (was !== 'up' || fresh) {
        this.generation += 1;
        this.onBack();
      }
    } catch (err) {
      this.state = toUiError(err).code === 'unauthorized' ? 'new_token' : 'stopped';
    }
  }
}
