// Latency samples (ms) summarised as the benches report them: count, median, p99 and max.

export interface Latency {
  calls: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function latency(xs: readonly number[]): Latency {
  const v = [...xs].sort((a, b) => a - b);
  const q = (p: number) => v[Math.min(v.length - 1, Math.floor(p * v.length))]!;
  return { calls: v.length, p50_ms: q(0.5), p99_ms: q(0.99), max_ms: v.at(-1)! };
}

interface AppInfoClient {
  api: { app: { info(i: object): Promise<unknown> } };
}

/** Times `app.info` calls, one every `everyMs`, into `into` until `until()` holds: how long a user's next
 * request waits while the studio is busy with another. */
export async function pollAppInfo(
  c: AppInfoClient,
  into: number[],
  until: () => boolean,
  everyMs: number,
): Promise<void> {
  while (!until()) {
    const s = performance.now();
    await c.api.app.info({});
    into.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
