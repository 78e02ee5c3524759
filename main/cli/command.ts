// One pskills command: a row of the command table (table.ts). USAGE, `pskills help`, `--help` and
// the "usage: …" errors are all generated from these rows (usage.ts).
import type { CliContext } from './context';

export interface Command {
  /** What the user types: one word (`compile`), or a group and its subcommand (`skills list`). */
  name: string;
  /** Arguments and flags after the name, `<name>[@<n>] [--bundle DIR]`; '' when it takes none.
   *  --data-dir, --json and --help are common to every command and not repeated here. */
  usage: string;
  /** One line: what it does or prints. */
  summary: string;
  /** Runs with the arguments after the name; resolves to the exit status (nothing: 0). */
  run(argv: string[], ctx: CliContext): Promise<number | void>;
}
