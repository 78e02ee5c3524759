// Entry point of `pskills`: dispatches to a command; every error is one line on stderr.
import { StudioError } from '../../common/errors';
import { runImport, runServe, runSkills, USAGE, type Io } from './commands';
import { runAdapters, runEma, runMerge } from './adapters';
import { runCompare, runCompile } from './compile';
import { runEval } from './eval';
import { runGenerate } from './generate';
import { runSkillworld } from './skillworld';
import { forTerminal } from './terminal';

// Every line printed is escaped for the terminal (terminal.ts).
const io: Io = { out: (l) => process.stdout.write(forTerminal(l) + '\n'), err: (l) => process.stderr.write(forTerminal(l) + '\n') };

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'import':
      await runImport(rest, io);
      return 0;
    case 'skills':
      await runSkills(rest, io);
      return 0;
    case 'adapters':
      await runAdapters(rest, io);
      return 0;
    case 'merge':
      await runMerge(rest, io);
      return 0;
    case 'ema':
      await runEma(rest, io);
      return 0;
    case 'compile':
      await runCompile(rest, io);
      return 0;
    case 'compare':
      await runCompare(rest, io);
      return 0;
    case 'eval':
      return runEval(rest, io);
    case 'skillworld':
      return runSkillworld(rest, io);
    case 'generate':
      await runGenerate(rest, io, (t) => process.stdout.write(forTerminal(t)));
      return 0;
    case 'serve': {
      const server = await runServe(rest, io);
      const stop = () => void server.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return -1; // keep running
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(USAGE);
      return cmd === undefined ? 2 : 0;
    default:
      throw new StudioError('invalid_input', `unknown command "${cmd}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    const msg = err instanceof Error ? err.message : String(err);
    io.err(`pskills: ${msg.split('\n')[0]}`);
    process.exitCode = err instanceof StudioError && err.code === 'invalid_input' ? 2 : 1;
  },
);
