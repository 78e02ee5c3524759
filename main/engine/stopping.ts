// When a row stops, and what of its text may be streamed: stop tokens end it at once, stop strings
// end it where they begin (the string itself is not output), and text that could still grow into
// a stop string is held back until it cannot.
import { invalid } from './errors';

export type FinishReason = 'eos' | 'stop' | 'length' | 'cancelled';

export class StopStrings {
  private pending = '';

  constructor(private readonly stops: readonly string[]) {
    if (stops.some((s) => s.length === 0)) throw invalid('stop strings must not be empty', { field: 'stop' });
  }

  /** Adds decoded text; returns what may be emitted now, and whether a stop string was reached. */
  push(text: string): { text: string; stopped: boolean } {
    this.pending += text;
    let cut = -1;
    for (const s of this.stops) {
      const at = this.pending.indexOf(s);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      const out = this.pending.slice(0, cut);
      this.pending = '';
      return { text: out, stopped: true };
    }
    const keep = this.heldBack();
    const out = this.pending.slice(0, this.pending.length - keep);
    this.pending = this.pending.slice(this.pending.length - keep);
    return { text: out, stopped: false };
  }

  /** The held-back tail, once the row ends for another reason. */
  flush(): string {
    const out = this.pending;
    this.pending = '';
    return out;
  }

  /** Length of the longest tail of `pending` that is a proper prefix of some stop string. */
  private heldBack(): number {
    let keep = 0;
    for (const s of this.stops) {
      for (let n = Math.min(s.length - 1, this.pending.length); n > keep; n--) {
        if (this.pending.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
      }
    }
    return keep;
  }
}

/** The token-level criteria, checked after each token is chosen. */
export interface TokenLimits {
  readonly stopTokenIds: ReadonlySet<number>;
  readonly maxNewTokens: number;
  /** Position limit of the model (architecture.max_positions). */
  readonly maxPositions: number;
}

export function tokenStop(
  limits: TokenLimits,
  tokenId: number,
  generated: number,
  nextPosition: number,
): FinishReason | null {
  if (limits.stopTokenIds.has(tokenId)) return 'eos';
  if (generated >= limits.maxNewTokens || nextPosition >= limits.maxPositions) return 'length';
  return null;
}
