// Checkers read off a skill's own words: a rule a person writes in plain English ("Always begin the
// answer with the word ZORBLAX", "Mention `ticket`", "Reply in JSON", "Answer in French", "At most 20
// words") becomes a
// test the compare page can mark ✓/✗, and a rewrite in the shape the default 5 M model was trained
// on (docs/guide.md, "Your own skill"). Only rules these patterns recognise are suggested.
import type { Expect } from './expect';
import { LANGUAGES, type Language } from './language';
import { passesAnything } from './meaningful';

export interface Suggestion {
  /** What the rule is about. */
  kind: 'prefix' | 'word' | 'format' | 'language' | 'length';
  /** The sentence of the skill the rule was read from. */
  rule: string;
  expect: Expect;
  /** The rule rewritten in the example skills' shape (a colon prefix on one line), when it has one. */
  rewrite: string | null;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** A quoted or bare token: `X`, "X", 'X', or a word. */
const TOKEN = String.raw`(?:\x60([^\x60\n]{1,60})\x60|"([^"\n]{1,60})"|'([^'\n]{1,60})'|([A-Za-z0-9_:\-]{1,60}))`;
const pick = (m: RegExpExecArray, from: number) => (m[from] ?? m[from + 1] ?? m[from + 2] ?? m[from + 3] ?? '').trim();

const PREFIX = new RegExp(
  String.raw`\b(?:begin|start|prefix|open)s?\s+(?:(?:every|each|the|your|all)\s+)?(?:answers?|repl(?:y|ies)|responses?|messages?|outputs?)\s+with\s+(?:the\s+)?(?:(?:word|codeword|prefix|text|token|string)\s+)?` +
    TOKEN,
  'i',
);
const WORD = new RegExp(
  String.raw`\b(?:always\s+)?(?:include|mention|contain|say|use)s?\s+(?:the\s+)?(?:(?:word|codeword|phrase|term)\s+)?` +
    String.raw`(?:\x60([^\x60\n]{1,60})\x60|"([^"\n]{1,60})"|'([^'\n]{1,60})')`,
  'i',
);
const JSON_FORMAT = /\b(?:answer|reply|respond|output|return)\w*\s+(?:only\s+)?(?:in|as|with)\s+(?:valid\s+)?JSON\b/i;
const LANGUAGE_NAMES = Object.entries(LANGUAGES).map(([code, name]) => [name.toLowerCase(), code as Language] as const);
const languageRule = (verbs: string) =>
  new RegExp(
    String.raw`\b(?:${verbs})\w*\b[^.!?\n]{0,40}?\b(?:in|into)\s+(${LANGUAGE_NAMES.map(([n]) => n).join('|')})\b`,
    'i',
  );
/** "Answer in French", "Always reply only in German", "Write your answers in Spanish", "Translate it into
 *  Dutch"; a verb of answering first, so "answer in English even when the user writes in German" is English. */
const LANGUAGE = [languageRule('answer|repl(?:y|ies)|respond'), languageRule('write|speak|talk|output|translate')];
const ONE_LINE = /\b(?:on\s+)?(?:one|a\s+single|single)\s+line\b/i;
const MAX_LENGTH =
  /\b(?:at\s+most|no\s+more\s+than|fewer\s+than|under|maximum\s+of|max(?:imum)?)\s+(\d{1,4})\s+(words?|characters?|chars?)\b/i;

/** The sentences of a skill's body (frontmatter left out), one rule each at most. */
function sentences(text: string): string[] {
  const body = text.replace(/^---\n[\s\S]*?\n---\n?/, '');
  return body
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/^[\s>*#\-\d.]+/, '').trim())
    .filter((s) => s.length > 0 && s.length < 400);
}

/** Checkers for the rules found in a skill's text, the first of each kind and value, at most six. */
export function suggestCheckers(text: string): Suggestion[] {
  const out: Suggestion[] = [];
  const seen = new Set<string>();
  const add = (s: Suggestion) => {
    const key = JSON.stringify(s.expect);
    if (seen.has(key) || out.length >= 6 || passesAnything(s.expect)) return;
    seen.add(key);
    out.push(s);
  };
  for (const rule of sentences(text)) {
    let m = PREFIX.exec(rule);
    if (m) {
      const value = pick(m, 1);
      if (value) {
        const word = value.replace(/:$/, '');
        add({
          kind: 'prefix',
          rule,
          expect: { kind: 'regex', pattern: `^${escapeRegex(value)}` },
          rewrite: `Prefix the answer with \`${word}:\` and keep it on one line.`,
        });
        continue;
      }
    }
    m = WORD.exec(rule);
    if (m) {
      const value = pick(m, 1);
      if (value) add({ kind: 'word', rule, expect: { kind: 'contains', value }, rewrite: null });
    }
    if (JSON_FORMAT.test(rule))
      add({ kind: 'format', rule, expect: { kind: 'json_schema', schema: { type: 'object' } }, rewrite: null });
    else if (ONE_LINE.test(rule))
      add({ kind: 'format', rule, expect: { kind: 'regex', pattern: '^[^\\n]+$' }, rewrite: null });
    m = LANGUAGE[0]!.exec(rule) ?? LANGUAGE[1]!.exec(rule);
    if (m) {
      const language = LANGUAGE_NAMES.find(([n]) => n === m![1]!.toLowerCase())![1];
      add({ kind: 'language', rule, expect: { kind: 'language', language }, rewrite: null });
    }
    m = MAX_LENGTH.exec(rule);
    if (m) {
      const n = Number(m[1]);
      const words = /^w/i.test(m[2]!);
      if (n >= 1)
        add({
          kind: 'length',
          rule,
          expect: words
            ? { kind: 'regex', pattern: `^\\s*(?:\\S+\\s+){0,${n - 1}}\\S+\\s*$` }
            : { kind: 'regex', pattern: `^[\\s\\S]{1,${n}}$` },
          rewrite: null,
        });
    }
  }
  return out;
}
