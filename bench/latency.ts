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
