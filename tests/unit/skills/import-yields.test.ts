// Judging an import's skills (parse, language detection) yields to the event loop between slices
// (docs/security.md "A frozen server"): before, 10,000 skills held the loop for 12.5 s in one
// synchronous pass, so no other request, stream or timer ran. Here a setImmediate ticker must run
// while the parse phase is in progress. The lag itself is measured by bench/event-loop.ts (import_10k).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { collectImport } from '../../../main/skills/importer';

const N = 400;
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'pskills-import-yields-'));
  for (let i = 0; i < N; i++) {
    mkdirSync(join(work, `s${i}`));
    writeFileSync(
      join(work, `s${i}`, 'SKILL.md'),
      `---\nname: s${i}\ndescription: Check release ${i}.\n---\n\n# Release ${i}\n\n` +
        `Confirm that step ${i} of the release has a named owner and a written rollback plan.\n`.repeat(60),
    );
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

it('lets other work run on the event loop while it judges the skills', async () => {
  let parsing = false;
  let ticksWhileParsing = 0;
  let stop = false;
  const tick = () => {
    if (parsing) ticksWhileParsing++;
    if (!stop) setImmediate(tick);
  };
  setImmediate(tick);
  let parsed = 0;
  const result = await collectImport(work, {
    cacheDir: join(work, '.cache'),
    onProgress: (p) => {
      if (p.phase !== 'parse') return;
      parsed = p.done;
      parsing = p.done < p.total;
    },
  });
  stop = true;
  expect(result.versions).toHaveLength(N);
  expect(parsed).toBe(N);
  expect(ticksWhileParsing).toBeGreaterThan(0);
});
