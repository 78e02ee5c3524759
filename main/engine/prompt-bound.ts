// A cheap refusal before tokenizing (a 3.6 MB prompt held the event loop for 20 s). No token
// stands for more bytes of text than tokenizer.maxTokenBytes, so a text longer than max_positions ×
// that cannot fit the context, whatever it tokenizes to; and what is tokenized stays small.
import type { BundleInfo } from './bundle-info';

type Bundle = Pick<BundleInfo, 'manifest' | 'tokenizer'>;
import { invalid } from './errors';

export function promptByteLimit(bundle: Bundle): number {
  return bundle.manifest.architecture.max_positions * bundle.tokenizer.maxTokenBytes;
}

const n = (x: number) => x.toLocaleString('en-US');

/** Throws the context error (details carry max_positions, as the token check's do) for a text of `bytes` UTF-8 bytes. */
export function checkPromptBytes(bundle: Bundle, bytes: number, who = 'prompt'): void {
  const limit = promptByteLimit(bundle);
  if (bytes <= limit) return;
  const { max_positions } = bundle.manifest.architecture;
  throw invalid(
    `${who} is ${n(bytes)} bytes; at most ${n(limit)} bytes can fit the context of ${n(max_positions)} positions (max_positions), so it was not tokenized; shorten it`,
    {
      bytes,
      limit,
      max_positions,
    },
  );
}

/** The first `limit` UTF-16 units of `text` (≥ `limit` bytes when cut): all of it that could fit. */
export function headForContext(bundle: Bundle, text: string): string {
  const limit = promptByteLimit(bundle);
  if (text.length <= limit) return text;
  const code = text.charCodeAt(limit - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit); // never split a surrogate pair
}
