// Argument parsing shared by every pskills command.
import { parseArgs } from 'node:util';
import { StudioError } from '../../common/errors';
import { splitSkillRef } from '../../common/api/skill-schemas';

export const COMMON_OPTIONS = {
  'data-dir': { type: 'string' },
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

/** `name` or `name@3` → { name, version } (splitSkillRef's rule); version 0 is refused. */
export function parseSkillRef(ref: string): { name: string; version?: number } {
  const r = splitSkillRef(ref);
  if (r.version !== undefined && !(r.version >= 1 && Number.isSafeInteger(r.version))) {
    throw new StudioError('invalid_input', `bad version in "${ref}": expected name@N with N ≥ 1`);
  }
  return r;
}
