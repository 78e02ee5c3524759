// What a verifier test expects of an answer: a SkillWorld checker spec (common/skillworld/check.ts,
// whose `exact`, `contains` and `regex` are also the forms a user writes for a real skill), a
// JSON Schema the answer, parsed as JSON, must satisfy (converted with zod's fromJSONSchema), or a
// language the answer must be written in (language.ts). The last two are the studio's own: the
// SkillWorld checkers, shared with Python, know neither.
import { z } from 'zod';
import { CheckerSpecSchema, check, normalizeAnswer, type CheckerSpec } from '../skillworld/check';
import { describeExpect } from './describe';
import { checkLanguage, LanguageExpectSchema, type LanguageExpect } from './language';

export interface JsonSchemaExpect {
  kind: 'json_schema';
  schema: Record<string, unknown>;
}
export type Expect = CheckerSpec | JsonSchemaExpect | LanguageExpect;

const compiled = new WeakMap<object, z.ZodType>();

/** The zod schema for a JSON Schema; throws an Error naming what it cannot convert. */
export function jsonSchemaValidator(schema: Record<string, unknown>): z.ZodType {
  let v = compiled.get(schema);
  if (!v) {
    v = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    compiled.set(schema, v);
  }
  return v;
}

const PlainObject = z.custom<Record<string, unknown>>(
  (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  'expected a JSON Schema object',
);

export const JsonSchemaExpectSchema = z.strictObject({
  kind: z.literal('json_schema'),
  schema: PlainObject.superRefine((schema, ctx) => {
    try {
      jsonSchemaValidator(schema);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: `not a JSON Schema this studio can check: ${(e as Error).message}` });
    }
  }),
});

export const ExpectSchema: z.ZodType<Expect> = z.union([
  JsonSchemaExpectSchema,
  LanguageExpectSchema,
  CheckerSpecSchema,
]);

/** The JSON value an answer holds: the whole answer, or the body of one ``` fence that is all of it. */
function jsonOf(answer: string): { ok: true; value: unknown } | { ok: false } {
  const text = normalizeAnswer(answer);
  const fenced = /^```[A-Za-z]*\n([\s\S]*?)\n?```$/.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1]! : text) };
  } catch {
    return { ok: false };
  }
}

export interface ExpectOutcome {
  passed: boolean;
  /** Why it failed, in a line; null when it passed. */
  reason: string | null;
}

const short = (s: string) => (s.length > 160 ? `${s.slice(0, 157)}…` : s);

/** Whether answer meets expect. */
export function checkExpect(expect: Expect, answer: string): ExpectOutcome {
  if (expect.kind === 'language') return checkLanguage(expect, normalizeAnswer(answer));
  if (expect.kind === 'json_schema') {
    const parsed = jsonOf(answer);
    if (!parsed.ok) return { passed: false, reason: 'the answer is not JSON' };
    const r = jsonSchemaValidator(expect.schema).safeParse(parsed.value);
    if (r.success) return { passed: true, reason: null };
    const issue = r.error.issues[0]!;
    return {
      passed: false,
      reason: `JSON Schema: ${issue.path.length ? `at ${issue.path.join('.')}: ` : ''}${issue.message}`,
    };
  }
  return check(expect, answer)
    ? { passed: true, reason: null }
    : { passed: false, reason: `does not pass: ${short(describeExpect(expect))}` };
}
