// Tool round-trip practice, the `round_trip` source (docs/distill.md "Practice"): every teacher answer
// that is a call to a tool the skill names becomes a follow-up question, [the request, assistant = that
// call, tool = a made-up result], which the teacher answers with the skill in context. The same rules,
// regexes and seeded results as training/src/pskills_train/distill/round_trip.py; the `round_trip`
// section of tests/fixtures/practice-cases.json pins both. Python's `\w`, `\s`, `\d` and str.strip are
// Unicode-wide, so they are spelled out here rather than taken from JavaScript's ASCII classes.
import { chatOf, type PracticeQuestion } from './practice';
import type { PracticeTurn } from './practice-synth';
import { hash, pick } from './practice-text';

export const SOURCE = 'round_trip';
/** Follow-ups per skill. */
export const CAP = 8;
/** A call is a short answer; a long one explains or reports rather than calls. */
export const MAX_CALL_CHARS = 240;

const WORD = '\\p{L}\\p{N}_'; // Python's \w
const SPACE_CHARS = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const S = `[${SPACE_CHARS}]`; // Python's \s and str.isspace
const NS = `[^${SPACE_CHARS}]`;
const STRIP = new RegExp(`^${S}+|${S}+$`, 'gu');
// name(args) with at least one argument that is a keyword (a=..., a: ...) or a literal (quoted, number).
const CALL = new RegExp(`(?<![${WORD}.])([A-Za-z_][${WORD}.\\-]{0,48})\\(${S}*([^()]*?${NS}[^()]*?)${S}*\\)`, 'gu');
const ARG = new RegExp(`^(?:[A-Za-z_][${WORD}\\-]*${S}*[=:]|["'\\p{Nd}\\[{])`, 'u');
const FENCES = new RegExp(`^\`\`\`[${WORD}]*${S}*|${S}*\`\`\`$`, 'gu');
const NAME_KEYS = ['tool', 'name', 'function', 'tool_name'];
const ARG_KEYS = ['arguments', 'args', 'parameters', 'params', 'input'];

export interface Call {
  readonly name: string;
  /** The arguments as written (the inside of the parentheses, or the JSON of the arguments). */
  readonly args: string;
}

/** Python's str.strip(). */
export function pyStrip(text: string): string {
  return text.replace(STRIP, '');
}

/** Python's json.dumps (separators ", " and ": "). Numbers are written as JavaScript writes them, and an
 * object's integer-like keys come first: a parsed call's `args` may differ there, and nothing built from
 * it does (a follow-up uses the call's name and the answer as written). */
export function pyDumps(value: unknown, ensureAscii = true): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    const s = JSON.stringify(value);
    return ensureAscii ? s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyDumps(v, ensureAscii)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `${pyDumps(k, ensureAscii)}: ${pyDumps(v, ensureAscii)}`).join(', ')}}`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonCall(text: string): Call | null {
  const s = pyStrip(text).replace(FENCES, '');
  if (!(s.startsWith('{') && s.endsWith('}'))) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(s);
  } catch {
    return null;
  }
  if (!isRecord(obj)) return null;
  if (isRecord(obj.function)) obj = obj.function; // {"function": {"name": ..., "arguments": ...}}
  const o = obj as Record<string, unknown>;
  const nameKey = NAME_KEYS.find((k) => typeof o[k] === 'string' && pyStrip(o[k]).length > 0);
  const argKey = ARG_KEYS.find((k) => Object.hasOwn(o, k));
  const args = argKey === undefined ? null : o[argKey];
  if (nameKey === undefined || args === null || args === undefined) return null;
  return { name: pyStrip(o[nameKey] as string), args: typeof args === 'string' ? args : pyDumps(args, false) };
}

/** The tool call a short answer makes, or null: `name(arg=...)` anywhere in it (no space before the
 * parenthesis, and a keyword or literal argument, so prose like "the total (about 40)" is no call),
 * or a JSON call object. */
export function detectCall(answer: string): Call | null {
  const text = pyStrip(answer);
  if (!text || [...text].length > MAX_CALL_CHARS) return null;
  const js = jsonCall(text);
  if (js !== null) return js;
  for (const m of text.matchAll(CALL)) if (ARG.test(m[2]!)) return { name: m[1]!, args: m[2]! };
  return null;
}

/** Whether the skill's text names the tool `name` as a word (case-insensitive). */
export function namesTool(skillText: string, name: string): boolean {
  const escaped = name.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  return new RegExp(`(?<![${WORD}.\\-])${escaped}(?![${WORD}\\-])`, 'iu').test(skillText);
}

// Made-up results: generic words and numbers, a few JSON shapes (none of a generator's formats).
export const RESULT_LEXICON = {
  status: ['approved', 'pending', 'closed', 'on hold', 'shipped', 'active', 'expired', 'in review'],
  name: ['Dana Reyes', 'Ravi Shah', 'Mei Chen', 'Omar Haddad', 'Lena Vogel', 'Tomas Novak'],
  place: ['Lisbon', 'Osaka', 'Denver', 'Nairobi', 'Tromso', 'Quito'],
  unit: ['kg', 'units', 'EUR', 'USD', 'hours', 'km'],
} as const;
export const SHAPES = ['result', 'status_data', 'value', 'output', 'record'] as const;

type Key = readonly (string | number)[];

export function resultValue(...key: Key): string {
  const kind = hash(...key, 'kind') % 4;
  const n = (hash(...key, 'n') % 9000) + 10;
  if (kind === 0) return pick(RESULT_LEXICON.status, ...key, 's');
  if (kind === 1) return pick(RESULT_LEXICON.name, ...key, 'p');
  // Python's f"{n / 10:.1f}", in integers.
  if (kind === 2) return `${Math.floor(n / 10)}.${n % 10} ${pick(RESULT_LEXICON.unit, ...key, 'u')}`;
  return `${pick(RESULT_LEXICON.place, ...key, 'c')} ${(n % 97) + 2}`;
}

/** A tool result as a JSON string, shape and value drawn by the key. */
export function resultText(...key: Key): string {
  const v = resultValue(...key);
  const shape = pick(SHAPES, ...key, 'shape');
  const obj =
    shape === 'result'
      ? { result: v }
      : shape === 'status_data'
        ? { status: 'ok', data: v }
        : shape === 'value'
          ? { value: v }
          : shape === 'output'
            ? { output: v, ok: true }
            : { record: { id: (hash(...key, 'id') % 90000) + 10000, value: v } };
  return pyDumps(obj);
}

/** Up to `cap` follow-up questions out of (question, the teacher's answer) pairs whose answer is a call
 * to a tool the skill names: the question's chat, the call as the assistant turn, a made-up tool result
 * (the question, the last turn). Each is answered by the teacher (no answer). */
export function followUps(
  said: readonly (readonly [PracticeQuestion, string])[],
  seed: number,
  skillText: string,
  cap = CAP,
): PracticeQuestion[] {
  const out: PracticeQuestion[] = [];
  const seen = new Set<string>();
  for (const [q, answer] of said) {
    if (out.length >= cap) break;
    const chat = chatOf(q);
    const last = chat.at(-1);
    if (!last || last.role !== 'user') continue; // only a request's call; a chat after a tool turn stays as it is
    const call = detectCall(answer);
    const text = pyStrip(answer);
    if (call === null || seen.has(text) || !namesTool(skillText, call.name)) continue;
    seen.add(text);
    const result = resultText(seed, SOURCE, last.content, text);
    const messages: PracticeTurn[] = [
      ...chat.map((m) => ({ role: m.role, content: m.content })),
      { role: 'assistant', content: text },
      { role: 'tool', content: result },
    ];
    out.push({ question: result, source: SOURCE, messages });
  }
  return out;
}
