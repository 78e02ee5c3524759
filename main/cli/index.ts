// Entry point of `pskills`: runs the command the arguments name (run.ts); every error is one line on
// stderr, exit status 2 for bad input and 1 otherwise.
import { StudioError } from '../../common/errors';
import { createContext, type Io } from './context';
import { runCli } from './run';
import { forTerminal } from './terminal';

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
