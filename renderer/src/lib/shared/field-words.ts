// A schema failure as a person reads it: the field named in words and its message as a sentence
// (`sources.0.weight` + `Too big: expected number to be <=1000000` → “weight” of source 1 must be at
// most 1,000,000), not a zod path and zod's wording.

const words = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();

/** `tests` → `test`: a list's name before one of its items. */
const singular = (name: string) => (/[^s]s$/.test(name) ? name.slice(0, -1) : name);

/** `sources.0.weight` → `“weight” of source 1`; `maxTokens` → `“max tokens”`; `tests.2` → `test 3`. */
export function fieldWords(path: string): string {
  const parts = path.split('.').filter(Boolean);
  const steps: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    if (next !== undefined && /^\d+$/.test(next)) {
      steps.push(`${singular(words(part))} ${Number(next) + 1}`);
      i++;
    } else if (/^\d+$/.test(part)) steps.push(`item ${Number(part) + 1}`);
    else steps.push(words(part));
  }
  if (!steps.length) return 'the request';
  const last = steps.pop()!;
  const head = /\d$/.test(last) ? last : `“${last}”`;
  return steps.length ? `${head} of ${steps.reverse().join(' of ')}` : head;
}

const num = (s: string) => (Number.isFinite(Number(s)) ? Number(s).toLocaleString('en-US') : s);
const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};
const typeWords = (t: string) => TYPE_WORDS[t] ?? t;

/** zod's message as the end of a sentence whose subject is the field. */
const SENTENCES: ReadonlyArray<[RegExp, (m: RegExpMatchArray) => string]> = [
  [/^(?:Invalid input: )?expected (\w+), received undefined$/i, () => 'is missing'],
  [/^(?:Invalid input: )?expected int, received number$/i, () => 'must be a whole number'],
  [
    /^(?:Invalid input: )?expected (\w+), received (\w+)$/i,
    (m) => `must be ${typeWords(m[1]!)}, not ${typeWords(m[2]!)}`,
  ],
  [/^Too small: expected string to have >=1 characters?$/, () => 'must not be empty'],
  [/^Too small: expected array to have >=1 items?$/, () => 'must not be empty'],
  [/^Too small: expected \w+ to have >=(\d+) (\w+)$/, (m) => `must have at least ${num(m[1]!)} ${m[2]}`],
  [/^Too big: expected \w+ to have <=(\d+) (\w+)$/, (m) => `must have at most ${num(m[1]!)} ${m[2]}`],
  [/^Too small: expected number to be >=(\S+)$/, (m) => `must be at least ${num(m[1]!)}`],
  [/^Too small: expected number to be >(\S+)$/, (m) => `must be more than ${num(m[1]!)}`],
  [/^Too big: expected number to be <=(\S+)$/, (m) => `must be at most ${num(m[1]!)}`],
  [/^Too big: expected number to be <(\S+)$/, (m) => `must be less than ${num(m[1]!)}`],
  [/^Invalid option: expected one of (.*)$/, (m) => `must be one of ${m[1]!.split('|').join(', ')}`],
  [/^Unrecognized keys?: (.*)$/, (m) => `has a field the studio does not know: ${m[1]}`],
  [/^Invalid input$/, () => 'is not in a form the studio accepts'],
];

/** zod's message as "must …" (no subject), or null for a message it does not know. */
export function predicate(message: string): string | null {
  for (const [pattern, say] of SENTENCES) {
    const m = message.match(pattern);
    if (m) return say(m);
  }
  return null;
}

/** A form field's label + sentence: `Blend weight (β) must be at most 1.` */
export function labelledIssue(label: string, message: string): string {
  const said = predicate(message);
  return said ? `${label} ${said}.` : `${label}: ${message}`;
}

/** “field” + sentence: `The field “weight” of source 1 must be at most 1,000,000.` */
export function issueSentence(path: string, message: string): string {
  const field = fieldWords(path);
  const subject = field.charAt(0) === '“' ? `The field ${field}` : field.charAt(0).toUpperCase() + field.slice(1);
  const said = predicate(message);
  return said ? `${subject} ${said}.` : `${subject} was not accepted: ${message}`;
}
