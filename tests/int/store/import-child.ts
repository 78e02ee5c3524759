// Child process for crash.int.test.ts. Imports a small base batch (committed), then a large batch.
// In "crash" mode it reports from inside the large batch's transaction and then blocks, so the
// parent's SIGKILL lands while the transaction is open; if no kill comes it carries on and finishes,
// which the parent sees as a failure.
import { writeSync } from 'node:fs';
import { openDatabase } from '../../../main/store/db';
import { SkillsRepo } from '../../../main/store/skills-repo';
import { baseBatch, bulkBatch } from './batches';

const [file, mode] = process.argv.slice(2);
if (!file || (mode !== 'crash' && mode !== 'complete')) {
  throw new Error('usage: import-child.ts <db file> crash|complete');
}

function say(line: string): void {
  // Synchronous so the line is in the pipe before we block; a pipe may take a long line in parts.
  const bytes = Buffer.from(`${line}\n`);
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeSync(1, bytes, at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
    }
  }
}

function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const db = openDatabase(file);
const repo = new SkillsRepo(db);
say(`base ${JSON.stringify(repo.importBatch('base', baseBatch()))}`);

const bulk = bulkBatch();
const result = repo.importBatch('bulk', bulk, {
  onProgress: (done) => {
    if (mode === 'crash' && done === bulk.length / 2) {
      say(`mid ${JSON.stringify({ done, inTransaction: db.inTransaction })}`);
      blockFor(60_000);
    }
  },
});
say(`bulk ${JSON.stringify(result)}`);
db.close();
