// One piece of synchronous main-thread work per event-loop turn. Results that a worker finishes
// together (20 /v1 requests compiling at once) would otherwise be stored back to back inside one
// message callback, and the web host would answer nothing until the last (docs/security.md "A
// frozen server"). Each job runs in its own setImmediate; the next is queued from inside it, so it
// runs in the next turn, after the poll phase has served whatever I/O is waiting.
type Job = () => void;

export class TurnLane {
  private readonly queue: Job[] = [];
  private scheduled = false;

  /** Runs `fn` in a later turn, one job a turn, in order; resolves or rejects with its outcome. */
  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => {
        try {
          resolve(fn());
        } catch (err) {
          reject(err as Error);
        }
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.queue.shift()!();
      this.schedule();
    });
  }
}

/** The lane the studio's stores share. */
export const storeLane = new TurnLane();
