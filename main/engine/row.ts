// One row of a generation: its prompt, its sampling parts, and the tokens and text it has produced.
import { randomInt } from 'node:crypto';
import type { EngineAdapter } from './adapter';
import type { Bundle } from './bundle';
import { Detokenizer } from './detokenizer';
import { invalid } from './errors';
import { processorsFor, type LogitsProcessor, type SamplingOptions } from './logits-processors';
import { checkPromptBytes } from './prompt-bound';
import { samplerFor, type Sampler } from './sampler';
import { StopStrings, tokenStop, type FinishReason, type TokenLimits } from './stopping';

export interface GenerateRequest {
  /** Text, encoded as is (render chat messages with `bundle.chat` first), or token ids. */
  readonly prompt: string | readonly number[];
  /** Scale folded (see adapter.ts); null or absent = the base model. */
  readonly adapter?: EngineAdapter | null;
  readonly maxNewTokens?: number;
  readonly sampling?: SamplingOptions;
  /** Strings that end the row; the output stops just before them. */
  readonly stop?: readonly string[];
  /** Tokens that end the row. Default: bundle.json special_tokens.stop; [] = none. */
  readonly stopTokenIds?: readonly number[];
}

export interface TokenEvent {
  readonly tokenId: number;
  /** Text this token adds to the output ('' while held back: partial character, possible stop string). */
  readonly text: string;
}

export interface RowResult {
  readonly tokens: readonly number[];
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly promptTokens: number;
}

export const DEFAULT_MAX_NEW_TOKENS = 256;

export class Row {
  readonly promptIds: readonly number[];
  readonly tokens: number[] = [];
  private text = '';
  private finish: FinishReason | null = null;
  private readonly processors: LogitsProcessor[];
  private readonly sample: Sampler;
  private readonly detok: Detokenizer;
  private readonly stops: StopStrings;
  private readonly limits: TokenLimits;

  constructor(bundle: Bundle, req: GenerateRequest, index?: number) {
    const who = index === undefined ? 'prompt' : `row ${index}: prompt`;
    const { vocab, max_positions } = bundle.manifest.architecture;
    if (typeof req.prompt === 'string') checkPromptBytes(bundle, Buffer.byteLength(req.prompt), who);
    this.promptIds = typeof req.prompt === 'string' ? bundle.tokenizer.encode(req.prompt) : [...req.prompt];
    const badId = this.promptIds.find((id) => !Number.isInteger(id) || id < 0 || id >= vocab);
    if (badId !== undefined)
      throw invalid(`${who}: token id ${badId} is outside the vocabulary (0..${vocab - 1})`, { row: index });
    if (this.promptIds.length === 0) throw invalid(`${who} is empty`, { row: index });
    if (this.promptIds.length >= max_positions) {
      throw invalid(
        `${who} is ${this.promptIds.length} tokens; the model's context is ${max_positions} positions (max_positions), leaving no room to generate`,
        { row: index, tokens: this.promptIds.length, max_positions },
      );
    }
    const maxNewTokens = req.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS;
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1)
      throw invalid(`maxNewTokens is ${maxNewTokens}, expected an integer ≥ 1`, { row: index, field: 'maxNewTokens' });
    const sampling = req.sampling ?? {};
    this.processors = processorsFor(sampling);
    this.sample = samplerFor(sampling.temperature, sampling.seed ?? randomInt(2 ** 32));
    this.detok = new Detokenizer(bundle.tokenizer);
    this.stops = new StopStrings(req.stop ?? []);
    this.limits = {
      stopTokenIds: new Set(req.stopTokenIds ?? bundle.manifest.special_tokens.stop),
      maxNewTokens,
      maxPositions: max_positions,
    };
  }

  get done(): boolean {
    return this.finish !== null;
  }

  /** The position the next token fed for this row takes. */
  get nextPosition(): number {
    return this.promptIds.length + this.tokens.length - 1;
  }

  /** Chooses this row's next token from its logits (modified in place) and says what to stream. */
  next(logits: Float32Array): TokenEvent {
    const context = this.processors.length ? [...this.promptIds, ...this.tokens] : [];
    for (const process of this.processors) process(logits, context);
    const tokenId = this.sample(logits);
    this.tokens.push(tokenId);
    const reason = tokenStop(this.limits, tokenId, this.tokens.length, this.nextPosition);
    const { text, stopped } = this.stops.push(this.detok.push(tokenId));
    let out = text;
    if (stopped) this.finish = 'stop';
    else if (reason) {
      const tail = this.stops.push(this.detok.flush());
      out += tail.text + (tail.stopped ? '' : this.stops.flush());
      this.finish = tail.stopped ? 'stop' : reason;
    }
    this.text += out;
    return { tokenId, text: out };
  }

  cancel(): void {
    this.finish ??= 'cancelled';
  }

  result(): RowResult {
    return {
      tokens: this.tokens,
      text: this.text,
      finishReason: this.finish ?? 'cancelled',
      promptTokens: this.promptIds.length,
    };
  }
}
