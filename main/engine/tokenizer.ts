// The bundle's tokenizer: tokenizer.json + tokenizer_config.json through @huggingface/tokenizers,
// which reproduces Hugging Face `tokenizers` id for id (tested against Python on the fixture).
import { Tokenizer } from '@huggingface/tokenizers';

export interface TokenizerConfig {
  readonly bos_token?: unknown;
  readonly eos_token?: unknown;
  readonly pad_token?: unknown;
  readonly chat_template?: unknown;
  readonly [key: string]: unknown;
}

/** tokenizer_config.json spells special tokens as strings or as {content: ...} objects. */
export function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string') return (value as { content: string }).content;
  return undefined;
}

export class BundleTokenizer {
  private readonly tok: Tokenizer;

  constructor(
    tokenizerJson: object,
    readonly config: TokenizerConfig,
  ) {
    // No space clean-up on decode (as Python's tokenizers) unless the config asks for it (as transformers).
    this.tok = new Tokenizer(tokenizerJson, { clean_up_tokenization_spaces: false, ...config });
  }

  /** Token ids without implicit special tokens: templates and callers write what the model sees. */
  encode(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: readonly number[], { skipSpecialTokens = false } = {}): string {
    return ids.length === 0 ? '' : this.tok.decode([...ids], { skip_special_tokens: skipSpecialTokens });
  }
}
