// Two processes importing into one data dir at once must both succeed. A
// deferred transaction that reads and then writes got SQLITE_BUSY_SNAPSHOT ("database is locked"),
// which busy_timeout does not cover; and two openers of a new data dir raced on its creation.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../../main/store/db';
import { ENGLISH_BODY, skillMd } from '../../fixtures/skills/skill-md';
import type { ImportAnswer } from './import-worker';

const TRIALS = 20;
const SKILLS = 400; // per source: enough that the two write transactions overlap

let tmp: string;
const workers: Worker[] = [];
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'pskills-writers-'));
  for (const side of ['a', 'b']) {
    for (let i = 0; i < SKILLS; i++) {
      const dir = join(tmp, side, `${side}-${i}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'SKILL.md'),
        skillMd({ name: `${side}-${i}`, body: `${ENGLISH_BODY}\nThis is skill ${side}-${i}.\n` }),
      );
    }
  }
  for (let w = 0; w < 2; w++) {
    const worker = new Worker(new URL('./import-worker.mjs', import.meta.url));
    await new Promise((resolve) => worker.once('message', resolve)); // 'ready'
    workers.push(worker);
  }
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.terminate()));
  rmSync(tmp, { recursive: true, force: true });
});

const ask = (worker: Worker, dataDir: string, source: string) =>
  new Promise<ImportAnswer>((resolve) => {
    worker.once('message', resolve);
    worker.postMessage({ dataDir, source });
  });

it(`two parallel imports into one data dir succeed ${TRIALS} of ${TRIALS} times`, { timeout: 60_000 }, async () => {
  const failures: string[] = [];
  for (let t = 0; t < TRIALS; t++) {
    // Odd trials start from a data dir that already holds a library, even ones from a new folder.
    const dataDir = join(tmp, `data-${t}`);
    if (t % 2) {
      mkdirSync(dataDir);
      openDatabase(join(dataDir, 'studio.db')).close();
    }
    const answers = await Promise.all([
      ask(workers[0]!, dataDir, join(tmp, 'a')),
      ask(workers[1]!, dataDir, join(tmp, 'b')),
    ]);
    for (const a of answers) if (!a.ok) failures.push(`trial ${t}: ${a.error}`);
    if (answers.every((a) => a.ok)) {
      expect(answers).toEqual([
        { ok: true, imported: SKILLS },
        { ok: true, imported: SKILLS },
      ]);
      const db = openDatabase(join(dataDir, 'studio.db'));
      expect(db.prepare('SELECT COUNT(*) FROM skills').pluck().get()).toBe(2 * SKILLS);
      expect(db.prepare('SELECT COUNT(*) FROM import_runs').pluck().get()).toBe(2);
      db.close();
    }
  }
  expect(failures).toEqual([]);
});
