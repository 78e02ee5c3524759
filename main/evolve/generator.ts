// What a generator hands the runner: revised SKILL.md texts, each with how it was made. Two kinds,
// chosen once per run: the offline edit operators (offline-generator.ts) and an OpenAI-compatible
// chat model (llm-generator.ts).
import type { VerifierTest } from '../../common/api/verify-schemas';

export interface Proposal {
  text: string;
  /** An operator chain (`move_rule_up+checklist`) or `llm`. */
  operator: string;
  note: string;
}

export interface ProposeInput {
  /** The text to improve: the best so far. */
  parent: string;
  tests: readonly VerifierTest[];
  /** How many proposals are wanted (fewer may come back). */
  count: number;
  /** Fixes the random choices: the run's seed and the iteration. */
  key: string;
  /** Texts the run already holds: not to be proposed again. */
  exclude?: ReadonlySet<string>;
  /** The parent's failed tests, for a generator that can use them. */
  failures: readonly { id: string; reason: string | null }[];
  signal?: AbortSignal;
}

export interface Generator {
  readonly kind: 'offline' | 'llm';
  propose(input: ProposeInput): Promise<Proposal[]>;
}
