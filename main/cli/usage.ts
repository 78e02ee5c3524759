// Every text about how to call pskills, generated from the command table: USAGE, one command's
// --help, a group's (`pskills ema --help`) and the one-line "usage: …" errors.
import { StudioError } from '../../common/errors';
import type { Command } from './command';

const COLUMN = 37; // summaries start here; a longer synopsis puts its summary on the next line
const COMMON =
  "every command takes --data-dir DIR (default: $PSKILLS_DATA_DIR, else the studio's user-data folder), --json, -h/--help,\n" +
  '  --provider cpu|webgpu|cuda (where bundles run; default: the executionProvider setting; unavailable: cpu, with a message)';
const HELP_ROW: [string, string] = [
  'help [<command>]',
  "this text, or one command's usage (also: pskills <command> --help)",
];

export const synopsis = (c: Command): string => (c.usage ? `${c.name} ${c.usage}` : c.name);

/** The first word of a command's name: its group when it has a subcommand. */
export const groupOf = (c: Command): string => c.name.split(' ')[0]!;

/** What a command throws when its arguments do not fit: `usage: pskills <synopsis>`. */
export const usageError = (c: Command): StudioError =>
  new StudioError('invalid_input', `usage: pskills ${synopsis(c)}`);

/** What `pskills <group>` with a missing or unknown subcommand throws. */
export function groupUsageError(group: string, members: readonly Command[]): StudioError {
  if (members.length === 1) return usageError(members[0]!);
  const subs = members.map((c) => c.name.slice(group.length + 1)).join('|');
  return new StudioError('invalid_input', `usage: pskills ${group} ${subs} …`);
}

function row(left: string, right: string): string {
  return left.length <= COLUMN - 4
    ? `  ${left.padEnd(COLUMN - 2)}${right}`
    : `  ${left}\n${' '.repeat(COLUMN)}${right}`;
}

/** Table order, except that a group's commands stay together where the group first appears. */
function grouped(commands: readonly Command[]): Command[] {
  const groups = [...new Set(commands.map(groupOf))];
  return groups.flatMap((g) => commands.filter((c) => groupOf(c) === g));
}

/** USAGE: every command with its summary (`pskills`, `pskills help`, an unknown command). */
export function usageText(commands: readonly Command[]): string {
  const rows = grouped(commands).map((c) => row(synopsis(c), c.summary));
  return ['usage: pskills <command> [--data-dir DIR] [--json]', ...rows, row(...HELP_ROW)].join('\n');
}

/** `pskills <command> --help`. */
export function commandHelp(c: Command): string {
  return [`usage: pskills ${synopsis(c)}`, `  ${c.summary}`, COMMON].join('\n');
}

/** `pskills <group> --help`: each of its commands. */
export function groupHelp(group: string, members: readonly Command[]): string {
  return [`usage: pskills ${group} <subcommand>`, ...members.map((c) => row(synopsis(c), c.summary)), COMMON].join(
    '\n',
  );
}
