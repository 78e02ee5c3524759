// Choosing the next token from processed logits: greedy argmax, or a multinomial draw from the
// softmax with a seeded PRNG so that a seed reproduces a generation exactly.

export type Rng = () => number;
export type Sampler = (logits: Float32Array) => number;

/** mulberry32: small, fast, 32-bit state; uniform in [0, 1). */
export function seededRng(seed: number): Rng {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Index of the largest logit; the lowest index wins a tie (as torch.argmax). */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

export function multinomial(logits: Float32Array, rng: Rng): number {
  const max = logits[argmax(logits)]!;
  let total = 0;
  const weights = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) total += weights[i] = Math.exp(logits[i]! - max);
  let u = rng() * total;
  for (let i = 0; i < weights.length; i++) {
    u -= weights[i]!;
    if (u < 0) return i;
  }
  return argmax(logits); // rounding left u ≥ 0: the mass ran out at the end
}

export function samplerFor(temperature: number | undefined, seed: number): Sampler {
  if (!temperature) return argmax;
  const rng = seededRng(seed);
  return (logits) => multinomial(logits, rng);
}
