// Streaming text: the text a new token adds. Byte-level tokens can end inside a UTF-8 character,
// so text is only released once it no longer ends in U+FFFD (the prefix/read offset scheme of
// text-generation-inference's `decode_token`).
import type { BundleTokenizer } from './tokenizer';

export class Detokenizer {
  private readonly ids: number[] = [];
  private prefix = 0;
  private read = 0;

  constructor(
    private readonly tokenizer: BundleTokenizer,
    private readonly skipSpecialTokens = true,
  ) {}

  /** The text `id` completes; '' while a character is still partial. */
  push(id: number): string {
    this.ids.push(id);
    const before = this.decode(this.prefix, this.read);
    const after = this.decode(this.prefix, this.ids.length);
    if (after.length <= before.length || after.endsWith('\uFFFD')) return '';
    this.prefix = this.read;
    this.read = this.ids.length;
    return after.slice(before.length);
  }

  /** Whatever is still held back (a partial character at the very end decodes as U+FFFD). */
  flush(): string {
    const rest = this.decode(this.prefix, this.ids.length).slice(this.decode(this.prefix, this.read).length);
    this.prefix = this.read = this.ids.length;
    return rest;
  }

  private decode(from: number, to: number): string {
    return this.tokenizer.decode(this.ids.slice(from, to), { skipSpecialTokens: this.skipSpecialTokens });
  }
}
