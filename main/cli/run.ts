// Finds the command the arguments name in the table and runs it; help and usage come from usage.ts.
import { StudioError } from '../../common/errors';
import type { Command } from './command';
import type { CliContext } from './context';
import { COMMANDS } from './table';
import { commandHelp, groupHelp, groupOf, groupUsageError, usageText } from './usage';

type Found =
  | { kind: 'command'; command: Command; rest: string[] }
  | { kind: 'group'; group: string; members: Command[]; rest: string[] }
  | { kind: 'unknown' };

/** `skills list …` names the command `skills list`; `skills` alone or `skills bogus`, the group. */
export function findCommand(commands: readonly Command[], argv: string[]): Found {
  const [first, second] = argv;
  const two = second === undefined ? undefined : commands.find((c) => c.name === `${first} ${second}`);
  if (two) return { kind: 'command', command: two, rest: argv.slice(2) };
  const one = commands.find((c) => c.name === first);
  if (one) return { kind: 'command', command: one, rest: argv.slice(1) };
  const members = commands.filter((c) => c.name.includes(' ') && groupOf(c) === first);
  if (members.length) return { kind: 'group', group: first!, members, rest: argv.slice(1) };
  return { kind: 'unknown' };
}

/** -h or --help among the command's own arguments (before a `--` that passes the rest on). */
function wantsHelp(args: string[]): boolean {
  const dash = args.indexOf('--');
  return (dash < 0 ? args : args.slice(0, dash)).some((a) => a === '--help' || a === '-h');
}

/** Runs `pskills ARGV`; resolves to the exit status. Errors are thrown for the caller to print. */
export async function runCli(
  argv: string[],
  ctx: CliContext,
  commands: readonly Command[] = COMMANDS,
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    ctx.io.out(usageText(commands));
    return 2;
  }
  const asksHelp = first === 'help' || first === '--help' || first === '-h';
  if (asksHelp && (rest.length === 0 || rest[0]!.startsWith('-'))) {
    ctx.io.out(usageText(commands));
    return 0;
  }
  const found = findCommand(commands, asksHelp ? rest : argv);
  if (found.kind === 'unknown') {
    ctx.io.out(usageText(commands));
    throw new StudioError('invalid_input', `unknown command "${asksHelp ? rest[0] : first}"`);
  }
  if (found.kind === 'group') {
    if (asksHelp || wantsHelp(found.rest)) {
      ctx.io.out(groupHelp(found.group, found.members));
      return 0;
    }
    throw groupUsageError(found.group, found.members);
  }
  if (asksHelp || wantsHelp(found.rest)) {
    ctx.io.out(commandHelp(found.command));
    return 0;
  }
  return (await found.command.run(found.rest, ctx)) ?? 0;
}
