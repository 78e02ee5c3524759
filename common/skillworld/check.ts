// SkillWorld checker specs: declarative JSON that says whether an answer applies a rule. The
// studio's stage-3 verifier runs these; the trainer and the eval run the Python twin
// (training/src/pskills_train/skillworld/check.py). Both read tests/fixtures/skillworld/
// checker-cases.json. The language is documented in docs/skillworld.md.
import { z } from 'zod';
import { PatternError, validatePattern } from './pattern';

export type CheckerSpec =
  | { kind: 'exact'; value: string; ignore_case?: boolean }
  | { kind: 'contains'; value: string; ignore_case?: boolean; word?: boolean }
  | { kind: 'regex'; pattern: string; flags?: string }
  | { kind: 'tool_call'; name: string; args: Record<string, string> }
  | { kind: 'order'; items: string[]; ignore_case?: boolean }
  | { kind: 'min_words'; n: number }
  | { kind: 'all' | 'any'; of: CheckerSpec[] }
  | { kind: 'not'; of: CheckerSpec };

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ArgValue = z
  .string()
  .refine((v) => !v.includes('"') && !v.includes('\n'), "must be a string without '\"' or newlines");

export const CheckerSpecSchema: z.ZodType<CheckerSpec> = z.lazy(() =>
  z.union([
    z.strictObject({ kind: z.literal('exact'), value: z.string(), ignore_case: z.boolean().optional() }),
    z.strictObject({
      kind: z.literal('contains'),
      value: z.string().min(1),
      ignore_case: z.boolean().optional(),
      word: z.boolean().optional(),
    }),
    z.strictObject({
      kind: z.literal('regex'),
      pattern: z.string().superRefine((p, ctx) => {
        try {
          validatePattern(p);
        } catch (e) {
          if (!(e instanceof PatternError)) throw e;
          ctx.addIssue({ code: 'custom', message: e.message });
        }
      }),
      flags: z
        .string()
        .regex(/^(?!.*(.).*\1)[ims]*$/, "must be distinct letters of 'ims'")
        .optional(),
    }),
    z.strictObject({
      kind: z.literal('tool_call'),
      name: z.string().regex(IDENT),
      args: z.record(z.string().regex(IDENT), ArgValue),
    }),
    z.strictObject({
      kind: z.literal('order'),
      items: z
        .array(z.string().min(1))
        .min(2)
        .refine((a) => new Set(a).size === a.length, 'must be distinct'),
      ignore_case: z.boolean().optional(),
    }),
    z.strictObject({ kind: z.literal('min_words'), n: z.number().int().min(1) }),
    z.strictObject({ kind: z.enum(['all', 'any']), of: z.array(CheckerSpecSchema).min(1) }),
    z.strictObject({ kind: z.literal('not'), of: CheckerSpecSchema }),
  ]),
);

const WS = /^[ \t\n\f\v]+|[ \t\n\f\v]+$/g;
const WORDS = /[^ \t\n\f\v]+/g;

/** Line ends to \n, Unicode spaces to ' ', U+017F/U+212A to s/K (flag u+i folds them onto ASCII),
 *  then trim ASCII whitespace: what both interpreters match against. */
export function normalizeAnswer(answer: string): string {
  return answer
    .replace(/\r\n?|[\u2028\u2029\u0085]/g, '\n')
    .replace(/[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]/g, ' ')
    .replace(/\u017f/g, 's')
    .replace(/\u212a/g, 'K')
    .replace(WS, '');
}

const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const isWordChar = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9_]$/.test(c);

/** Index of the first occurrence of value at or after start with no ASCII word char touching it, else -1. */
export function findWord(text: string, value: string, start = 0): number {
  let i = text.indexOf(value, start);
  while (i >= 0) {
    if (!isWordChar(i > 0 ? text[i - 1] : undefined) && !isWordChar(text[i + value.length])) return i;
    i = text.indexOf(value, i + 1);
  }
  return -1;
}

/** The one tool call in text (`CALL name(key="value", ...)`); null when none, several or malformed. */
export function parseCall(text: string): { name: string; args: Record<string, string> } | null {
  if ((text.match(/\bCALL\b/g) ?? []).length !== 1) return null;
  const head = /\bCALL[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(/.exec(text);
  if (!head) return null;
  let pos = head.index + head[0].length;
  const args: Record<string, string> = {};
  const arg = /[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*"([^"\n]*)"[ \t]*/y;
  for (;;) {
    arg.lastIndex = pos;
    const a = arg.exec(text);
    if (!a) break;
    if (Object.hasOwn(args, a[1]!)) return null;
    args[a[1]!] = a[2]!;
    pos = arg.lastIndex;
    if (text[pos] === ',') pos++;
    else break;
  }
  return text
    .slice(pos)
    .replace(/^[ \t]+/, '')
    .startsWith(')')
    ? { name: head[1]!, args }
    : null;
}

const argValue = (v: string) => asciiLower((v.match(WORDS) ?? []).join(' '));

function evaluate(spec: CheckerSpec, text: string): boolean {
  const fold = 'ignore_case' in spec && spec.ignore_case ? asciiLower : (s: string) => s;
  switch (spec.kind) {
    case 'exact':
      return fold(text) === fold(spec.value);
    case 'contains':
      return (spec.word ? findWord(fold(text), fold(spec.value)) : fold(text).indexOf(fold(spec.value))) >= 0;
    case 'regex':
      return new RegExp(spec.pattern, `u${spec.flags ?? ''}`).test(text);
    case 'tool_call': {
      const call = parseCall(text);
      const want = Object.keys(spec.args);
      if (!call || call.name !== spec.name || Object.keys(call.args).length !== want.length) return false;
      return want.every((k) => Object.hasOwn(call.args, k) && argValue(call.args[k]!) === argValue(spec.args[k]!));
    }
    case 'order': {
      const hay = fold(text);
      let last = -1;
      for (const item of spec.items) {
        const at = findWord(hay, fold(item));
        if (at <= last) return false;
        last = at;
      }
      return true;
    }
    case 'min_words':
      return (text.match(WORDS) ?? []).length >= spec.n;
    case 'all':
      return spec.of.every((s) => evaluate(s, text));
    case 'any':
      return spec.of.some((s) => evaluate(s, text));
    case 'not':
      return !evaluate(spec.of, text);
  }
}

/** Whether answer passes spec. Throws a ZodError when spec is not in the checker language. */
export function check(spec: unknown, answer: string): boolean {
  return evaluate(CheckerSpecSchema.parse(spec), normalizeAnswer(answer));
}
