// Entry point of `pskills`: runs the command the arguments name (run.ts); every error is one line on
// stderr, exit status 2 for bad input and 1 otherwise.
import { StudioError } from '../../common/errors';
import { createContext, type Io } from './context';
import { runCli } from './run';
import { forTerminal } from './terminal';

// A reader that leaves before the output ends (`pskills skills list | head -1`) is not an error: writing
// to the closed pipe fails with EPIPE, and the process ends there quietly, status 0 (or the failure status
// already set, when the command failed before the write error arrived), as Unix tools do. Any other write
// error on stdout stays fatal.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// Every line printed is escaped for the terminal (terminal.ts).
const io: Io = {
  out: (l) => process.stdout.write(forTerminal(l) + '\n'),
  err: (l) => process.stderr.write(forTerminal(l) + '\n'),
  write: (t) => process.stdout.write(forTerminal(t)),
};

runCli(process.argv.slice(2), createContext(io)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const msg = err instanceof Error ? err.message : String(err);
    io.err(`pskills: ${msg.split('\n')[0]}`);
    process.exitCode = err instanceof StudioError && err.code === 'invalid_input' ? 2 : 1;
  },
);
