import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Detokenizer } from '../../../main/engine/detokenizer';
import { BundleTokenizer } from '../../../main/engine/tokenizer';
import { FIXTURE_DIR } from '../../int/engine/fixture';

const read = (f: string) => JSON.parse(readFileSync(join(FIXTURE_DIR, f), 'utf8'));
const tok = new BundleTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));

describe('Detokenizer', () => {
  it('streams text that adds up to the decoded whole, never splitting a character', () => {
    const text = 'Café — 日本語 🙂 <|im_end|> done';
    const ids = tok.encode(text);
    const d = new Detokenizer(tok);
    const deltas = ids.map((id) => d.push(id));
    expect(deltas.join('') + d.flush()).toBe(tok.decode(ids, { skipSpecialTokens: true }));
    expect(deltas.some((t) => t.includes('\uFFFD'))).toBe(false);
    expect(deltas.filter((t) => t === '').length).toBeGreaterThan(0); // the multi-byte characters span tokens
  });

  it('keeps special tokens when asked', () => {
    const d = new Detokenizer(tok, false);
    const ids = tok.encode('<|im_start|>user');
    expect(ids.map((id) => d.push(id)).join('') + d.flush()).toBe('<|im_start|>user');
  });

  it('flushes a dangling partial character as U+FFFD', () => {
    const ids = tok.encode('日');
    expect(ids.length).toBeGreaterThan(1);
    const d = new Detokenizer(tok);
    expect(d.push(ids[0]!)).toBe('');
    expect(d.flush()).toBe('\uFFFD');
  });
});
