// The flag parsers every pskills command uses (through CliContext.flags): node's parseArgs with the
// common options, a skill reference, and one rule each for numbers and integers with one message shape.
import { parseArgs } from 'node:util';
import { StudioError } from '../../common/errors';
import { splitSkillRef } from '../../common/api/skill-schemas';

export const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
  provider: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export type OptionSpec = Parameters<typeof parseArgs>[0] extends infer P
  ? P extends { options?: infer O }
    ? O
    : never
  : never;

export function parse<O extends NonNullable<OptionSpec>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new StudioError('invalid_input', (err as Error).message);
  }
}

const PROVIDERS = ['cpu', 'webgpu', 'cuda'] as const;
export type ProviderFlag = (typeof PROVIDERS)[number];

/** --provider: one of cpu, webgpu, cuda (whether it is available is the engine's question). */
export function parseProvider(text: string): ProviderFlag {
  if ((PROVIDERS as readonly string[]).includes(text)) return text as ProviderFlag;
  throw new StudioError('invalid_input', `--provider: "${text}" is not one of ${PROVIDERS.join(', ')}`);
}

/** `name` or `name@3` → { name, version } (splitSkillRef's rule); version 0 is refused. */
export function parseSkillRef(ref: string): { name: string; version?: number } {
  const r = splitSkillRef(ref);
  if (r.version !== undefined && !(r.version >= 1 && Number.isSafeInteger(r.version))) {
    throw new StudioError('invalid_input', `bad version in "${ref}": expected name@N with N ≥ 1`);
  }
  return r;
}

const notA = (flag: string, text: string, expected: string) =>
  new StudioError('invalid_input', `${flag}: "${text}" is not ${expected}`);

/** A finite number; blank text is refused (Number('') would be 0). */
export function parseNumber(text: string, flag: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw notA(flag, text, 'a number');
  return n;
}

export interface IntegerRule {
  min?: number;
  max?: number;
  /** The words after "is not" in the error; default "an integer", with the bounds. */
  expected?: string;
}

/** Plain decimal digits (so the value handed on to Python is the one checked), within the bounds. */
export function parseInteger(text: string, flag: string, rule: IntegerRule = {}): number {
  const { min, max } = rule;
  const n = Number(text);
  const ok =
    /^-?[0-9]+$/.test(text) &&
    Number.isSafeInteger(n) &&
    (min === undefined || n >= min) &&
    (max === undefined || n <= max);
  if (ok) return n;
  const bounds =
    min !== undefined && max !== undefined
      ? ` from ${min} to ${max}`
      : min !== undefined
        ? ` ≥ ${min}`
        : max !== undefined
          ? ` ≤ ${max}`
          : '';
  throw notA(flag, text, rule.expected ?? `an integer${bounds}`);
}
