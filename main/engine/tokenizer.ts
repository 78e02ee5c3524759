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
  if (value && typeof value === 'object' && typeof (value as { content?: unknown }).content === 'string')
    return (value as { content: string }).content;
  return undefined;
}

/** Used when tokenizer.json lists no vocabulary we can read: generous for any BPE/Unigram vocab. */
const FALLBACK_TOKEN_BYTES = 256;

/** ByteLevel (GPT-2 style) vocabularies spell each byte as one character. */
function isByteLevel(j: { pre_tokenizer?: unknown }): boolean {
  const pre = j.pre_tokenizer as { type?: unknown; pretokenizers?: { type?: unknown }[] } | null | undefined;
  return (
    pre?.type === 'ByteLevel' ||
    (Array.isArray(pre?.pretokenizers) && pre.pretokenizers.some((p) => p?.type === 'ByteLevel'))
  );
}

/**
 * The most bytes of input text one token can stand for: the longest vocabulary entry (its characters
 * when byte-level, else its UTF-8 bytes) or added token (matched literally), doubled when a normalizer
 * runs first, since one may shrink the text (NFKC folds some 3-byte characters to 2).
 */
function bytesPerToken(json: object): number {
  const j = json as {
    model?: { vocab?: unknown };
    added_tokens?: unknown;
    normalizer?: unknown;
    pre_tokenizer?: unknown;
  };
  const vocab = j.model?.vocab;
  const pieces: unknown[] = Array.isArray(vocab)
    ? vocab.map((p: unknown) => (Array.isArray(p) ? p[0] : p))
    : vocab && typeof vocab === 'object'
      ? Object.keys(vocab)
      : [];
  const length = isByteLevel(j) ? (p: string) => [...p].length : (p: string) => Buffer.byteLength(p);
  let max = 0;
  for (const p of pieces) if (typeof p === 'string') max = Math.max(max, length(p));
  if (Array.isArray(j.added_tokens)) {
    for (const t of j.added_tokens) {
      const text = (t as { content?: unknown } | null)?.content;
      if (typeof text === 'string') max = Math.max(max, Buffer.byteLength(text));
    }
  }
  return (max || FALLBACK_TOKEN_BYTES) * (j.normalizer ? 2 : 1);
}

export class BundleTokenizer {
  private readonly tok: Tokenizer;
  /** See bytesPerToken: the prompt byte bound (prompt-bound.ts) is max_positions × this. */
  readonly maxTokenBytes: number;

  constructor(
    tokenizerJson: object,
    readonly config: TokenizerConfig,
  ) {
    // No space clean-up on decode (as Python's tokenizers) unless the config asks for it (as transformers).
    this.tok = new Tokenizer(tokenizerJson, { clean_up_tokenization_spaces: false, ...config });
    this.maxTokenBytes = bytesPerToken(tokenizerJson);
  }

  /** Token ids without implicit special tokens: templates and callers write what the model sees. */
  encode(text: string): number[] {
    return this.tok.encode(text, { add_special_tokens: false }).ids;
  }

  decode(ids: readonly number[], { skipSpecialTokens = false } = {}): string {
    return ids.length === 0 ? '' : this.tok.decode([...ids], { skip_special_tokens: skipSpecialTokens });
  }
}
