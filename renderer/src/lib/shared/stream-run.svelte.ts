// One streamed studio call followed to its end: its last progress event, the result or the error, and
// Cancel. The compile, distil and import runs differ only in what they send and keep besides.
import type { StreamHandle } from '../../../../common/api/define';
import { toUiError, type UiError } from './errors';

export type RunStatus = 'idle' | 'running' | 'done' | 'cancelled' | 'failed';

export class StreamRun<P, R> {
  status = $state<RunStatus>('idle');
  progress = $state.raw<P | null>(null);
  result = $state.raw<R | null>(null);
  error = $state.raw<UiError | null>(null);
  cancelling = $state(false);

  private handle: StreamHandle<R> | null = null;

  get running(): boolean {
    return this.status === 'running';
  }

  /** Starts the call `open` makes (it passes each event to `onEvent`); the result, or null when it failed. */
  protected async follow(open: (onEvent: (event: P) => void) => StreamHandle<R>): Promise<R | null> {
    this.status = 'running';
    this.progress = null;
    this.result = null;
    this.error = null;
    this.cancelling = false;
    try {
      this.handle = open((event) => {
        this.progress = event;
        this.onProgress(event);
      });
      this.result = await this.handle.result;
      this.status = 'done';
      return this.result;
    } catch (err) {
      this.error = toUiError(err);
      this.status = this.error.code === 'cancelled' ? 'cancelled' : 'failed';
      return null;
    } finally {
      this.handle = null;
      this.cancelling = false;
    }
  }

  /** What a run keeps from each event besides the event itself (the distil losses, import skips). */
  protected onProgress(_event: P): void {}

  cancel(): void {
    if (!this.handle) return;
    this.cancelling = true;
    this.handle.cancel();
  }
}
