// `pskills doctor`: checks the library's database with PRAGMA integrity_check on a read-only
// connection (every page and every index against its table), writing nothing. A damaged library is
// also refused whole when the studio opens it, so no write lands on it (docs/store.md).
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { DAMAGED_ADVICE, integrityProblems, notALibraryFile } from '../store/db';
import type { Command } from './command';
import { usageError } from './usage';

export const doctorCommand: Command = {
  name: 'doctor',
  usage: '',
  summary: "checks the library's database (integrity_check, read-only); exit 1 when it is damaged",
  async run(argv, { io, flags, dataDir }) {
    const { values, positionals } = flags.parse(argv, {});
    if (positionals.length) throw usageError(doctorCommand);
    const file = join(dataDir(values), 'studio.db');
    const exists = lstatSync(file, { throwIfNoEntry: false }) !== undefined; // a link loop exists too
    // A FIFO is never opened (SQLite would wait on it for good); an empty file or /dev/zero is no
    // library, though SQLite would call it an intact empty one.
    const odd = exists ? notALibraryFile(file) : null;
    const problems = odd ? [odd] : exists ? integrityProblems(file, 20) : [];
    const ok = problems.length === 0;
    const advice = ok ? null : DAMAGED_ADVICE;
    if (values.json) io.out(JSON.stringify({ file, exists, ok, problems, advice }));
    else if (!exists) io.out(`${file}: no library yet (the first command that needs one creates it)`);
    else if (odd) io.out(`${file}: not a library: ${odd}. ${DAMAGED_ADVICE}.`);
    else if (ok) io.out(`${file}: ok (integrity_check)`);
    else {
      io.out(`${file}: damaged (integrity_check)`);
      for (const p of problems) io.out(`  ${p}`);
      io.out(`${DAMAGED_ADVICE}.`);
    }
    return ok ? 0 : 1;
  },
};
